#!/usr/bin/env python3
"""Engram's `store` suite beside Python's sqlite3 + FTS5 on the very same rows.

Runs `engram-bench store --json --dump FILE` (release build), which writes the messages it
inserted as JSON lines, then inserts the same rows with the standard library's sqlite3 into a
new file with the schema a Python developer would write for a chat log: a `messages` table
(id, session, role, speaker, content, time, metadata) and an FTS5 table kept by an AFTER INSERT
trigger, stemmed by FTS5's porter tokenizer (Engram stems its indexed text too), WAL,
synchronous NORMAL, page size 4096 (Engram's settings), the same batch size, one transaction
per batch through `executemany`.

--rounds R alternates Engram and Python R times (rotating who goes first); --old-bin adds an
older engram-bench to the rotation, so the old and new insert paths share the host's load.
It prints every round, then the median insert rate of each and the ratio engram / python
(> 1 means Engram inserts faster), by wall time (`insert_per_s`) and by the inserting
thread's CPU time (`insert_cpu_per_s`, steadier when other processes share the cores);
--json prints the summary as JSON.

Needs only python3 (no venv): `python3 Benchmarks/peers/store_peers.py --bin .build/release/engram-bench`.
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import vectors_peers  # stdlib only at import time
from vectors_peers import cpu_model


SCHEMA = """
CREATE TABLE messages (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id  INTEGER,
  role        TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  speaker     TEXT,
  content     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  metadata    TEXT NOT NULL DEFAULT '{}'
);
CREATE VIRTUAL TABLE messages_fts USING fts5(
  body, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, body) VALUES (NEW.id, coalesce(NEW.speaker || ': ', '') || NEW.content);
END;
"""


def parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bin", help="engram-bench binary (default: build release and use it)")
    parser.add_argument("--old-bin", help="an older engram-bench to alternate with (same rows: same seed)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    return parser.parse_args()


def engram_bench_binary(args):
    # vectors_peers' builder reads its own ARGS: only `bin` is used.
    vectors_peers.ARGS = args
    return vectors_peers.engram_bench_binary()


def run_engram(binary, args, dump=None):
    command = [binary, "store", "--n", str(args.n), "--batch", str(args.batch), "--queries", "50", "--json"]
    if dump:
        command += ["--dump", dump]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_python(rows, batch, folder):
    path = os.path.join(folder, "peer.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA page_size = 4096")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.executescript(SCHEMA)
    start = time.perf_counter()
    cpu = time.thread_time()
    for index in range(0, len(rows), batch):
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO messages (role, speaker, content, created_at) VALUES (?, ?, ?, ?)",
            rows[index:index + batch])
        connection.execute("COMMIT")
    seconds = time.perf_counter() - start
    cpu_seconds = time.thread_time() - cpu
    connection.close()
    return {"insert_per_s": len(rows) / seconds, "insert_s": seconds, "insert_cpu_s": cpu_seconds}


def main():
    args = parse()
    binary = engram_bench_binary(args)
    with tempfile.TemporaryDirectory(prefix="store-peers-") as folder:
        dump = os.path.join(folder, "rows.jsonl")
        first = run_engram(binary, args, dump=dump)
        with open(dump) as handle:
            rows = [(r["role"], r.get("speaker"), r["content"], r["created_at"]) for r in map(json.loads, handle)]
        if len(rows) != args.n:
            sys.exit(f"store_peers: engram-bench dumped {len(rows)} rows, expected {args.n}")
        contenders = [("engram", binary)] + ([("engram_old", args.old_bin)] if args.old_bin else [])
        results = {name: [] for name, _ in contenders}
        results["python"] = []
        print(f"sqlite {sqlite3.sqlite_version} (python), CPU {cpu_model()}, load {os.getloadavg()[0]:.2f}",
              file=sys.stderr)
        for round_index in range(args.rounds):
            order = contenders + [("python", None)]
            shift = round_index % len(order)
            order = order[shift:] + order[:shift]
            line = []
            for name, path in order:
                if name == "engram" and round_index == 0:
                    report = first
                elif name == "python":
                    report = run_python(rows, args.batch, folder)
                else:
                    report = run_engram(path, args)
                rates = (report["insert_per_s"], args.n / report["insert_cpu_s"])
                results[name].append(rates)
                line.append(f"{name} {rates[0]:,.0f}/s (cpu {rates[1]:,.0f}/s)")
            print(f"round {round_index + 1}: " + ", ".join(line) + f"; load {os.getloadavg()[0]:.2f}",
                  file=sys.stderr)
        summary = {"n": args.n, "batch": args.batch, "rounds": args.rounds, "cpu": cpu_model(),
                   "python_sqlite": sqlite3.sqlite_version}
        for name, rates in results.items():
            summary[f"{name}_insert_per_s"] = statistics.median(rate[0] for rate in rates)
            summary[f"{name}_insert_cpu_per_s"] = statistics.median(rate[1] for rate in rates)
        for suffix in ("insert_per_s", "insert_cpu_per_s"):
            for name, _ in contenders:
                label = "ratio" if name == "engram" else "ratio_old"
                summary[f"{label}{'' if suffix == 'insert_per_s' else '_cpu'}"] = (
                    summary[f"{name}_{suffix}"] / summary[f"python_{suffix}"])
        for key, value in summary.items():
            print(f"{key}: {value:,.2f}" if isinstance(value, float) else f"{key}: {value}", file=sys.stderr)
        if args.json:
            print(json.dumps(summary))


if __name__ == "__main__":
    main()
