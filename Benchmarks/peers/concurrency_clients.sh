#!/usr/bin/env bash
# Runs Benchmarks/peers/concurrency_clients.py: 1, 4 and 16 client processes on a throwaway
# PostgreSQL server (scripts/postgres.sh), then 1 and 4 on a SQLite file, each on a fresh
# store, 100 user scopes, SECONDS seconds each (default 20). Needs a release build:
#   swift build -c release --product engram && Benchmarks/peers/concurrency_clients.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${SECONDS_PER_RUN:-20}
engram=${ENGRAM_BINARY:-.build/release/engram}
bench=Benchmarks/peers/concurrency_clients.py
if [ -z "${ENGRAM_TEST_POSTGRES_URL:-}" ]; then
  exec scripts/postgres.sh run "$0" "$@"
fi
grep -m1 'model name' /proc/cpuinfo
echo "cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
url=$ENGRAM_TEST_POSTGRES_URL
for clients in 1 4 16; do
  name="bench_clients_${clients}_$$"
  psql "$url" -qc "CREATE DATABASE $name"
  database=$(python3 -c 'import sys; u, d = sys.argv[1:]; print(u + ("&" if "?" in u else "?") + "dbname=" + d)' "$url" "$name")
  python3 "$bench" --engram "$engram" --db "$database" --clients "$clients" --seconds "$seconds"
  psql "$url" -qc "DROP DATABASE $name WITH (FORCE)"
done
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
for clients in 1 4; do
  python3 "$bench" --engram "$engram" --db "$folder/clients-$clients.sqlite" --clients "$clients" --seconds "$seconds"
done
