#!/usr/bin/env python3
"""Concurrent `engram` client processes on one store: PostgreSQL or a SQLite file.

N worker processes run for a fixed time. Each operation is one `engram` command (a process
of its own: start-up, connection, engine open, the operation, exit), on a user scope drawn
from --users scopes: `engram remember --user uK` (a write) or `engram query --user uK` (a
search). One operation in four is a write. A write, once acknowledged (exit 0), is handed to
the other workers; the next search of another worker looks for it (in its scope, by a unique
token) and records the cross-process freshness: acknowledgement until that worker's search
found it. The hashing embedder is used, so no model time is measured.

  python3 Benchmarks/peers/concurrency_clients.py --engram .build/release/engram \
      --db postgresql://... --clients 4 --seconds 20

Prints one JSON line: clients, searches/s, writes/s, p95 latencies (ms), freshness p95 (ms).
Standard library only.
"""

import argparse
import json
import multiprocessing
import os
import queue
import random
import subprocess
import sys
import time


def p95(values):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def engram(binary, db, arguments):
    started = time.monotonic()
    result = subprocess.run(
        [binary] + arguments + ["--db", db], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return result, time.monotonic() - started


def worker(index, args, deadline, fresh, results):
    rng = random.Random(index * 7919 + 1)
    writes, searches, write_latency, search_latency, freshness, errors = 0, 0, [], [], [], []
    missed = 0  # searches that did not yet find another worker's acknowledged write
    serial = 0
    while time.monotonic() < deadline:
        user = "u%d" % rng.randrange(args.users)
        if rng.random() < 0.25:
            serial += 1
            token = "tok%dx%dz%d" % (index, serial, rng.randrange(10**6))
            result, seconds = engram(
                args.engram, args.db,
                ["remember", "--user", user, "the locker code %s belongs to %s" % (token, user)])
            if result.returncode != 0:
                errors.append(result.stderr.strip()[:200])
                continue
            writes += 1
            write_latency.append(seconds)
            fresh.put((index, user, token, time.monotonic()))
            continue
        # A search: another worker's acknowledged write when one is waiting, else a plain query.
        pending = None
        try:
            candidate = fresh.get_nowait()
            if candidate[0] != index:
                pending = candidate
            else:
                fresh.put(candidate)
        except queue.Empty:
            pass
        if pending:
            _, user, token, acknowledged = pending
            text = "locker code %s" % token
        else:
            text = "locker code belongs to"
        result, seconds = engram(args.engram, args.db, ["query", "--user", user, "--json", "--limit", "3", text])
        if result.returncode != 0:
            errors.append(result.stderr.strip()[:200])
            continue
        searches += 1
        search_latency.append(seconds)
        if pending:
            if token in result.stdout:
                freshness.append(time.monotonic() - acknowledged)
            else:
                missed += 1
                fresh.put(pending)  # not visible yet: keep its acknowledgement time, look again
    results.put(dict(writes=writes, searches=searches, write_latency=write_latency,
                     search_latency=search_latency, freshness=freshness, errors=errors,
                     missed=missed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engram", required=True)
    parser.add_argument("--db", required=True, help="a postgresql:// URL or a SQLite file path")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()

    init = subprocess.run([args.engram, "init", "--model", "hashing:256", "--db", args.db],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if init.returncode != 0:
        sys.exit("engram init failed: " + init.stderr)
    fresh, results = multiprocessing.Queue(), multiprocessing.Queue()
    started = time.monotonic()
    deadline = started + args.seconds
    workers = [multiprocessing.Process(target=worker, args=(i, args, deadline, fresh, results))
               for i in range(args.clients)]
    for process in workers:
        process.start()
    collected = [results.get() for _ in workers]
    for process in workers:
        process.join()
    elapsed = time.monotonic() - started
    merged = {key: sum((c[key] for c in collected), [] if isinstance(collected[0][key], list) else 0)
              for key in collected[0]}
    ms = lambda value: None if value is None else round(value * 1000, 1)
    store = "postgresql" if args.db.startswith(("postgresql:", "postgres:")) else "sqlite"
    print(json.dumps({
        "store": store, "clients": args.clients, "users": args.users, "seconds": round(elapsed, 1),
        "searches_per_s": round(merged["searches"] / elapsed, 1),
        "writes_per_s": round(merged["writes"] / elapsed, 1),
        "search_p95_ms": ms(p95(merged["search_latency"])),
        "write_p95_ms": ms(p95(merged["write_latency"])),
        "freshness_p95_ms": ms(p95(merged["freshness"])),
        "freshness_samples": len(merged["freshness"]), "freshness_missed": merged["missed"],
        "errors": len(merged["errors"]), "first_error": (merged["errors"] or [None])[0],
    }))


if __name__ == "__main__":
    main()
