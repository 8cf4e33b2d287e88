#!/usr/bin/env bash
# The reliability report: runs the crash-safety, concurrency, hostile-input and permission
# tests and every fuzz target, then prints ONE table.
#   scripts/reliability.sh            (FUZZ_SECONDS per fuzz target, default 30)
#   ENGRAM_SOAK=1 scripts/reliability.sh   longer crash and concurrency soaks
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_TARGETS=${FUZZ_TARGETS:-"conversation fts wordpiece date arguments safetensors mcp"}
LOG=$(mktemp /tmp/engram-reliability.XXXXXX)
FUZZ_LOG=$(mktemp /tmp/engram-fuzz.XXXXXX)
trap 'rm -f "$LOG" "$FUZZ_LOG"' EXIT

swift build -Xswiftc -warnings-as-errors --build-tests >&2 || exit 1
ENGRAM_RELIABILITY_LOG="$LOG" swift test --skip-build \
  --filter 'CrashSafetyTests|ConcurrencyTests|HostileInputTests|FilePermissionTests' >"$LOG.tests" 2>&1
TEST_STATUS=$?
grep -E '^(crash-safety|concurrency)' "$LOG.tests" >&2
for target in $FUZZ_TARGETS; do
  ./scripts/fuzz.sh "$target" "$FUZZ_SECONDS" >>"$FUZZ_LOG" || echo "fuzz $target failed" >>"$FUZZ_LOG"
done

# Fields are `key=value`, spaces and % in values written as %20 and %25 (ReliabilityLog.swift).
field() { tr ' ' '\n' | sed -n "s/^$1=//p" | sed 's/%20/ /g; s/%25/%/g'; }
printf '%-13s %-38s %12s %12s %10s  %s\n' AREA CASE TRIED PASSED FAILED DETAIL
line() { printf '%-13s %-38s %12s %12s %10s  %s\n' "$@"; }
while read -r record; do
  kind=${record%% *}
  case "$kind" in
    crash)
      mode=$(field mode <<<"$record"); attempted=$(field attempted <<<"$record")
      survived=$(field survived <<<"$record"); lost=$(field lost <<<"$record")
      acknowledged=$(field acknowledged <<<"$record")
      line "crash kill -9" "$mode" "$attempted" "$survived" "$lost" \
        "writes lost of $acknowledged acknowledged; $(field detail <<<"$record")"
      ;;
    concurrency)
      name=$(field case <<<"$record"); errors=$(field errors <<<"$record")
      line "concurrency" "$name" "$(field writes <<<"$record")" "-" "$errors" \
        "searches $(field searches <<<"$record"), busy/lock timeouts $(field busy <<<"$record")"
      ;;
    hostile)
      name=$(field case <<<"$record")
      tried=$(field tried <<<"$record"); handled=$(field handled <<<"$record")
      detail=$(field detail <<<"$record")
      line "bad input" "$name" "$tried" "$handled" "$((tried - handled))" "${detail:-handled}"
      ;;
  esac
done <"$LOG"
while read -r _ target _ executions _ crashes _ seconds; do
  [[ -n "${seconds:-}" ]] || { line "fuzz" "$target" "-" "-" "build/run failed" ""; continue; }
  line "fuzz" "$target" "$executions" "-" "$crashes" "libFuzzer+ASan, ${seconds}s, crashes found"
done <"$FUZZ_LOG"
if [[ $TEST_STATUS -ne 0 ]]; then
  echo "some reliability tests failed:" >&2
  grep -E '✘' "$LOG.tests" | head -20 >&2
fi
rm -f "$LOG.tests"
exit $TEST_STATUS
