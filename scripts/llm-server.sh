#!/usr/bin/env bash
# Runs the local language model server that `make llm` built (llama.cpp's llama-server with
# SmolLM2-135M-Instruct) on loopback, for `engram chat --llm URL --llm-model smollm2`:
#
#   scripts/llm-server.sh [--port N] [--owner PID] [--time-limit SECONDS] [--pid-file FILE]
#
# It listens on 127.0.0.1 only (a free port unless --port is given), waits until the model
# is loaded and the server answers, then prints its base URL (`http://127.0.0.1:N`; the
# OpenAI-compatible API is under /v1) on standard output and returns. The server runs on
# in the background with a watchdog that stops it when its owner exits (the process that ran
# this script, or --owner PID) or after --time-limit seconds (default 3600,
# $ENGRAM_LLM_TIME_LIMIT), whichever comes first. --pid-file FILE receives the server's pid
# (kill it to stop the server sooner). Its log is in the folder named on standard error.
#
# The cache folder is ${XDG_CACHE_HOME:-~/.cache}/engram/llm (or $ENGRAM_LLM_DIR).
set -euo pipefail

log() { printf 'llm-server.sh: %s\n' "$*" >&2; }
usage() {
  log "usage: llm-server.sh [--port N] [--owner PID] [--time-limit SECONDS] [--pid-file FILE]"
  exit 64
}

port=""
owner=$PPID
limit=${ENGRAM_LLM_TIME_LIMIT:-3600}
pid_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
    --owner) [ $# -ge 2 ] || usage; owner=$2; shift 2 ;;
    --time-limit) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
    --pid-file) [ $# -ge 2 ] || usage; pid_file=$2; shift 2 ;;
    *) usage ;;
  esac
done
for value in "$owner" "$limit" ${port:+"$port"}; do
  case "$value" in
    '' | *[!0-9]*) log "'$value' is not a whole number"; usage ;;
  esac
done
if [ -n "$port" ] && { [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; }; then
  log "--port must be between 1 and 65535, not $port"
  exit 64
fi

cache="${ENGRAM_LLM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/llm}"
server="$cache/bin/llama-server"
model="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -x "$server" ] || [ ! -f "$model" ]; then
  log "llama-server or the SmolLM2 model is missing from $cache: run 'make llm' first"
  exit 1
fi

if [ -z "$port" ]; then
  # A free loopback port, chosen by the kernel. Another process could take it before the
  # server binds it: the server then fails to start and this script says so.
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

folder=$(mktemp -d /tmp/engram-llm.XXXXXX)
# The server: loopback only; an 8,192-token window, SmolLM2's own (the default 1,500-token
# budget is estimated, and LoCoMo contexts came to over 2,048 of its tokens with the prompt); at
# most 256 tokens per reply, so a model that never stops cannot hold a caller; one thread
# ($ENGRAM_LLM_THREADS sets another count): llama.cpp's threads meet at a barrier after
# every operation, and on a small machine whose cores are shared, one descheduled thread
# stalls the other (2 cores under load 18: 1.8 tokens per second with two threads, 28 with
# one; docs/llm.md). The model answers to any name; its alias is `smollm2`.
setsid "$server" --host 127.0.0.1 --port "$port" -m "$model" --alias smollm2 \
  --ctx-size 8192 --n-predict 256 --threads "${ENGRAM_LLM_THREADS:-1}" --parallel 1 \
  >"$folder/server.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$folder/server.pid"
[ -n "$pid_file" ] && echo "$pid" >"$pid_file"

# The watchdog: stops the server when the owner is gone, the server has exited, or the time
# limit has passed; then removes the folder. Detached (its own session, no standard output),
# so a caller reading this script's output is not held open by it.
setsid bash -c '
  pid=$1 owner=$2 limit=$3 folder=$4
  started=$SECONDS
  while kill -0 "$pid" 2>/dev/null && kill -0 "$owner" 2>/dev/null &&
    [ $((SECONDS - started)) -lt "$limit" ]; do
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$folder"
' llm-server-watchdog "$pid" "$owner" "$limit" "$folder" >/dev/null 2>&1 </dev/null &

url="http://127.0.0.1:$port"
log "server pid $pid, log $folder/server.log; stops when process $owner exits or after $limit s"
# Loading the model takes a few seconds; /health answers 200 once it is ready.
deadline=$((SECONDS + 120))
while [ "$SECONDS" -lt "$deadline" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    log "llama-server exited before it answered; its log:"
    tail -20 "$folder/server.log" >&2 2>/dev/null || true
    exit 1
  fi
  if curl -sf --max-time 2 "$url/health" >/dev/null 2>&1; then
    echo "$url"
    exit 0
  fi
  sleep 0.1
done
log "llama-server did not answer within 120 s; stopping it. Its log:"
tail -20 "$folder/server.log" >&2 2>/dev/null || true
kill -TERM "$pid" 2>/dev/null || true
exit 1
