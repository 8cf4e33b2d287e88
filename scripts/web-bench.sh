#!/usr/bin/env bash
# The web app's figures at scale, not part of `make test`: scripts/web-e2e.py on a memory of
# N generated conversation turns (default 100,000; hashing embedder), printing its checks and
# one JSON line with the first load (ms, bytes) and search-as-you-type p50/p95 in the browser.
#   scripts/web-bench.sh [N]           against the debug build
#   ENGRAM_BINARY=.build/release/engram scripts/web-bench.sh 100000
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/scripts/web-e2e.sh" --turns "${1:-100000}" --json --load-budget-ms 200 --search-budget-ms 50
