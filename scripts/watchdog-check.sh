#!/usr/bin/env bash
# Runs WatchdogProbeTests, which blocks every thread of Swift's cooperative pool for good, and
# checks that the test watchdog ends the run with the test's name and a failing status
# instead of hanging (docs/concurrency.md). Takes the probe's limit (1 min) plus 30 s grace.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cd "$root"
started=$SECONDS
ENGRAM_DEADLOCK_PROBE=1 ./scripts/watchdog.sh 300 watchdog-probe \
  swift test --skip-build --filter WatchdogProbeTests >"$log" 2>&1
status=$?
elapsed=$((SECONDS - started))
if [ "$status" -eq 0 ]; then
  cat "$log" >&2
  echo "watchdog-check: the probe passed; it should have been stopped" >&2
  exit 1
fi
if [ "$status" -eq 124 ]; then
  cat "$log" >&2
  echo "watchdog-check: the run hung until the script's own limit; the test watchdog did not fire" >&2
  exit 1
fi
if ! grep -q 'WATCHDOG: test EngramCoreTests.WatchdogProbeTests.blockingEveryCooperativeThreadIsStoppedByName()' "$log"; then
  cat "$log" >&2
  echo "watchdog-check: the run failed (status $status) without the watchdog naming the test" >&2
  exit 1
fi
grep 'WATCHDOG' "$log" | head -1
echo "watchdog-check: the blocked test was stopped by name after $elapsed s (status $status)"
