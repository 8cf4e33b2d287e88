#!/usr/bin/env bash
# `engram chat --llm` against a real language model server (`make llm`: llama.cpp's
# llama-server with SmolLM2-135M-Instruct, run by scripts/llm-server.sh), with the built
# `engram` binary (the debug build of `make test`, or $ENGRAM_BIN):
#   (a) a remembered fact is in the reply to a question about it, and the model took part
#       (the reply is not the answer from memory alone);
#   (b) the model's tokens reach standard output as they come, in several pieces over time;
#   (c) an unreachable server, then the server killed in the middle of a reply: one line on
#       standard error, the answer from memory on standard output, status 0, nothing written;
#   (d) waiting does not spin: against a stub server that thinks 4 s before it answers, the
#       chat uses little more CPU time than against one that answers at once (URLSession on
#       Linux once kept a core busy while it waited, the core a local model server needs).
# Every check fails the script with what it saw. CI runs it after `make test` (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  printf 'llm-e2e: FAIL: %s\n' "$*" >&2
  exit 1
}
pass() { printf 'llm-e2e: ok: %s\n' "$*" >&2; }

bin=${ENGRAM_BIN:-$(swift build --show-bin-path)/engram}
[ -x "$bin" ] || fail "no engram binary at $bin: run 'swift build' (or make test) first"

work=$(mktemp -d /tmp/engram-llm-e2e.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

url=$(./scripts/llm-server.sh --owner $$ --time-limit 900 --pid-file "$work/server.pid")
server_pid=$(cat "$work/server.pid")
case "$url" in
  http://127.0.0.1:[0-9]*) pass "server at $url (pid $server_pid)" ;;
  *) fail "llm-server.sh printed '$url', not a loopback URL" ;;
esac

db="$work/memory.sqlite"
"$bin" init --db "$db" >/dev/null
"$bin" remember --db "$db" "my locker code is 4512" >/dev/null
question="what is my locker code?"
memories() { "$bin" stats --db "$db" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["memories"])'; }
before=$(memories)
[ "$before" = 1 ] || fail "stats counts $before memories after one remember"

# --- (a) the fact is in the reply, and the model composed it -------------------------------
alone=$(printf '%s\n' "$question" | "$bin" chat --db "$db" --session alone 2>/dev/null)
reply=$(printf '%s\n' "$question" | "$bin" chat --db "$db" --session a --llm "$url" --llm-model smollm2 \
  2>"$work/a.err") || fail "chat --llm exited with $?: $(cat "$work/a.err")"
printf 'llm-e2e: memory alone: %s\nllm-e2e: with the model: %s\n' "$alone" "$reply" >&2
grep -q 4512 <<<"$alone" || fail "the answer from memory alone lacks 4512: '$alone'"
grep -q 4512 <<<"$reply" || fail "the reply with the model lacks 4512: '$reply'"
[ "$reply" != "$alone" ] || fail "the reply is memory's answer alone: the model took no part"
[ ! -s "$work/a.err" ] || fail "chat --llm wrote to standard error: $(cat "$work/a.err")"
pass "(a) the reply carries 4512 and the model's text"

# --- (b) streaming ------------------------------------------------------------------------
# Records each read of chat's standard output with its time; the reply must arrive in at
# least three reads spread over time, its first piece well before the end.
cat >"$work/pieces.py" <<'PY'
import json, os, subprocess, sys, time
bin, db, url, question, mode = sys.argv[1:6]
process = subprocess.Popen(
    [bin, "chat", "--db", db, "--session", mode, "--llm", url, "--llm-model", "smollm2"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
process.stdin.write((question + "\n").encode())
process.stdin.close()
start = time.monotonic()
pieces = []
killed = False
while True:
    data = os.read(process.stdout.fileno(), 65536)
    if not data:
        break
    pieces.append({"at": round(time.monotonic() - start, 4), "text": data.decode("utf-8", "replace")})
    if mode == "kill" and not killed:
        # The model has started to answer: the server dies in the middle of its reply.
        os.kill(int(sys.argv[6]), 9)
        killed = True
status = process.wait()
print(json.dumps({"status": status, "pieces": pieces, "stderr": process.stderr.read().decode()}))
PY
python3 "$work/pieces.py" "$bin" "$db" "$url" "$question" b >"$work/b.json"
python3 - "$work/b.json" <<'PY' || fail "(b) streaming: $(cat "$work/b.json")"
import json, sys
run = json.load(open(sys.argv[1]))
pieces = [p for p in run["pieces"] if p["text"].strip()]
text = "".join(p["text"] for p in run["pieces"])
assert run["status"] == 0, f"status {run['status']}"
assert "4512" in text, "no 4512 in the reply"
assert len(pieces) >= 3, f"the reply came in {len(pieces)} read(s), not streamed"
spread = pieces[-1]["at"] - pieces[0]["at"]
assert spread >= 0.05, f"the pieces came within {spread:.3f} s: not streamed"
print(f"llm-e2e: ok: (b) the reply came in {len(pieces)} pieces over {spread:.2f} s", file=sys.stderr)
PY

# --- (c) failures -------------------------------------------------------------------------
check_fallback() { # NAME JSON-FILE
  python3 - "$2" "$1" <<'PY'
import json, sys
run, name = json.load(open(sys.argv[1])), sys.argv[2]
text = "".join(p["text"] for p in run["pieces"])
lines = [l for l in run["stderr"].splitlines() if l.strip()]
assert run["status"] == 0, f"status {run['status']}"
assert len(lines) == 1, f"standard error has {len(lines)} lines, not one: {lines}"
assert "language model" in lines[0] and "from your memories" in lines[0], f"unclear error: {lines[0]}"
assert "my locker code is 4512" in text.splitlines()[-1], f"no answer from memory: {text!r}"
print(f"llm-e2e: ok: (c) {name}: '{lines[0]}'; reply '{text.splitlines()[-1]}'", file=sys.stderr)
PY
}
dead_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$work/pieces.py" "$bin" "$db" "http://127.0.0.1:$dead_port" "$question" unreachable >"$work/c1.json"
check_fallback "unreachable server" "$work/c1.json" || fail "(c) unreachable: $(cat "$work/c1.json")"

python3 "$work/pieces.py" "$bin" "$db" "$url" "$question" kill "$server_pid" >"$work/c2.json"
for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$server_pid" 2>/dev/null && fail "the server is still running after kill -9"
check_fallback "server killed mid-reply" "$work/c2.json" || fail "(c) killed: $(cat "$work/c2.json")"
server_pid=""

# --- (d) waiting does not spin -------------------------------------------------------------
# A stub OpenAI-compatible server (chat completions streamed after DELAY seconds, /tokenize
# answered 404); the chat's CPU time (user + system, from the kernel's accounting of the
# child) with a 4 s delay minus that with none is what waiting cost. Spinning cost about a
# core for the whole wait (3 to 4 s); a client that sleeps, a few hundredths.
cat >"$work/slow.py" <<'PY'
import http.server, json, socketserver, sys, threading, time
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.endswith("/chat/completions"):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        time.sleep(self.server.delay)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for text in ["Your locker", " code is", " 4512."]:
            event = {"choices": [{"index": 0, "delta": {"content": text}}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode()); self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n"); self.wfile.flush()
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
server = Server(("127.0.0.1", 0), Handler)
server.delay = float(sys.argv[1])
print(server.server_address[1], flush=True)
server.serve_forever()
PY
cat >"$work/cpu.py" <<'PY'
import os, resource, subprocess, sys, time
bin, db, url, question = sys.argv[1:5]
start = time.monotonic()
run = subprocess.run([bin, "chat", "--db", db, "--session", "d", "--llm", url, "--llm-model", "stub"],
    input=(question + "\n").encode(), capture_output=True)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
assert run.returncode == 0, f"chat exited with {run.returncode}: {run.stderr.decode()}"
assert b"4512" in run.stdout, f"no 4512 in {run.stdout!r}"
print(f"{usage.ru_utime + usage.ru_stime:.3f} {wall:.3f}")
PY
cpu_against() { # DELAY -> "CPU-SECONDS WALL-SECONDS"
  local port_file="$work/slow-$1.port" stub_pid result
  python3 "$work/slow.py" "$1" >"$port_file" &
  stub_pid=$!
  for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.05; done
  result=$(python3 "$work/cpu.py" "$bin" "$db" "http://127.0.0.1:$(cat "$port_file")" "$question") || {
    kill "$stub_pid"
    return 1
  }
  kill "$stub_pid"
  echo "$result"
}
read -r quick_cpu quick_wall < <(cpu_against 0) || fail "(d) the chat against the quick stub failed"
read -r slow_cpu slow_wall < <(cpu_against 4) || fail "(d) the chat against the slow stub failed"
python3 - "$quick_cpu" "$quick_wall" "$slow_cpu" "$slow_wall" <<'PY' || fail "(d) waiting spins"
import sys
quick_cpu, quick_wall, slow_cpu, slow_wall = map(float, sys.argv[1:5])
extra = slow_cpu - quick_cpu
assert slow_wall >= 4, f"the slow chat took {slow_wall:.2f} s: the stub did not delay"
assert extra < 1.0, (f"waiting 4 s for the server cost {extra:.2f} s of CPU "
    f"({slow_cpu:.2f} s against {quick_cpu:.2f} s without the wait)")
print(f"llm-e2e: ok: (d) waiting 4 s cost {extra:.2f} s of CPU (chat {slow_cpu:.2f} s in {slow_wall:.2f} s; "
      f"{quick_cpu:.2f} s in {quick_wall:.2f} s without the wait)", file=sys.stderr)
PY

after=$(memories)
[ "$after" = "$before" ] || fail "(c) the memories changed: $before before, $after after"
pass "(c) nothing written: $after memory item(s), as before"
echo "llm-e2e: all checks passed" >&2
