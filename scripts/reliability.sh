#!/usr/bin/env bash
# The reliability report: runs the crash-safety, concurrency and permission tests, the
# hostile suite (every test of every suite whose name begins with `Hostile`, in any test
# target) and every fuzz target, then prints ONE table, and the hostile suite's own table
# (probes tried, held, broken; one probe per test).
#   scripts/reliability.sh            (FUZZ_SECONDS per fuzz target, default 30)
#   ENGRAM_SOAK=1 scripts/reliability.sh   longer crash and concurrency soaks
#   HOSTILE_ONLY=1 scripts/reliability.sh  only the hostile suite and its table
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_TARGETS=${FUZZ_TARGETS:-"conversation fts wordpiece date arguments safetensors mcp"}
LOG=$(mktemp /tmp/engram-reliability.XXXXXX)
FUZZ_LOG=$(mktemp /tmp/engram-fuzz.XXXXXX)
trap 'rm -f "$LOG" "$FUZZ_LOG"' EXIT

swift build -Xswiftc -warnings-as-errors --build-tests >&2 || exit 1

# The hostile suite: every test of the suites named Hostile*, run once; each test is a probe
# that holds (passes) or is broken (fails).
HOSTILE_PATTERN='\.Hostile[A-Za-z0-9]*/'
swift test list --skip-build 2>/dev/null | grep -E "$HOSTILE_PATTERN" >"$LOG.hostile-list"
ENGRAM_RELIABILITY_LOG="$LOG" swift test --skip-build --filter "$HOSTILE_PATTERN" >"$LOG.hostile" 2>&1
HOSTILE_STATUS=$?
hostile_table() {
  printf '\n%-24s %-70s %6s %5s %7s\n' SUITE PROBE TRIED HELD BROKEN
  local total=0 held=0 suite name test_name line
  while read -r probe; do
    suite=${probe#*.}; suite=${suite%%/*}
    name=${probe#*/}; test_name=${name%%(*}
    line=$(grep -E "^. Test ${test_name}\(" "$LOG.hostile" | grep -E ' (passed|failed) after' | tail -1)
    total=$((total + 1))
    if [[ "$line" == *" passed after"* ]]; then
      held=$((held + 1))
      printf '%-24s %-70s %6s %5s %7s\n' "$suite" "$test_name" 1 1 0
    else
      printf '%-24s %-70s %6s %5s %7s\n' "$suite" "$test_name" 1 0 1
    fi
  done <"$LOG.hostile-list"
  printf '%-24s %-70s %6s %5s %7s\n' "hostile suite" "all probes" "$total" "$held" "$((total - held))"
}
if [[ "${HOSTILE_ONLY:-0}" == 1 ]]; then
  hostile_table
  if [[ $HOSTILE_STATUS -ne 0 ]]; then grep -E '✘' "$LOG.hostile" | head -20 >&2; fi
  rm -f "$LOG.hostile" "$LOG.hostile-list"
  exit $HOSTILE_STATUS
fi

ENGRAM_RELIABILITY_LOG="$LOG" swift test --skip-build \
  --filter 'CrashSafetyTests|ConcurrencyTests|FilePermissionTests' >"$LOG.tests" 2>&1
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
# A fuzz target that does not build or run, or finds a crash, fails the report like a test.
FUZZ_STATUS=0
while read -r _ target _ executions _ crashes _ seconds; do
  if [[ -z "${seconds:-}" ]]; then
    line "fuzz" "$target" "-" "-" "build/run failed" ""
    FUZZ_STATUS=1
    continue
  fi
  line "fuzz" "$target" "$executions" "-" "$crashes" "libFuzzer+ASan, ${seconds}s, crashes found"
  [[ "$crashes" == 0 ]] || FUZZ_STATUS=1
done <"$FUZZ_LOG"
hostile_table
if [[ $TEST_STATUS -ne 0 || $HOSTILE_STATUS -ne 0 ]]; then
  echo "some reliability tests failed:" >&2
  grep -hE '✘' "$LOG.tests" "$LOG.hostile" | head -20 >&2
fi
if [[ $FUZZ_STATUS -ne 0 ]]; then
  echo "a fuzz target failed to build or run, or found a crash (scripts/fuzz.sh TARGET shows why)" >&2
fi
rm -f "$LOG.tests" "$LOG.hostile" "$LOG.hostile-list"
[[ $TEST_STATUS -eq 0 && $HOSTILE_STATUS -eq 0 && $FUZZ_STATUS -eq 0 ]]
