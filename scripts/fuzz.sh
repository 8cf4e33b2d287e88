#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS: scripts/fuzz.sh TARGET [SECONDS]
#
# SwiftPM cannot link an executable against libFuzzer's own main, so the libraries are built
# by SwiftPM with fuzzer and address-sanitizer instrumentation (in .build/fuzz, apart from the
# normal build), and each entry in Fuzz/ is compiled and linked against their objects with
# swiftc directly. New inputs go to .build/fuzz/corpus/TARGET; crashing inputs are written to
# .build/fuzz/artifacts/TARGET/. The committed seeds in Fuzz/corpus/TARGET are read only.
#
# Prints one summary line: `fuzz TARGET executions N crashes C seconds S`.
# Targets: conversation fts wordpiece date arguments safetensors mcp (`all` runs each).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}
SECONDS_TO_RUN=${2:-30}
ALL_TARGETS="conversation fts wordpiece date arguments safetensors mcp"
SCRATCH=.build/fuzz
SANITIZE="-sanitize=fuzzer,address"

if [[ "$TARGET" == all ]]; then
  for target in $ALL_TARGETS; do "$0" "$target" "$SECONDS_TO_RUN"; done
  exit 0
fi

case "$TARGET" in
  conversation) SOURCE=Fuzz/FuzzConversationFile.swift ;;
  fts) SOURCE=Fuzz/FuzzFTSQuery.swift ;;
  wordpiece) SOURCE=Fuzz/FuzzWordPiece.swift ;;
  date) SOURCE=Fuzz/FuzzDateExpression.swift ;;
  arguments) SOURCE=Fuzz/FuzzArgumentParser.swift ;;
  safetensors) SOURCE=Fuzz/FuzzSafeTensors.swift ;;
  mcp) SOURCE=Fuzz/FuzzMCPMessage.swift ;;
  *) echo "unknown fuzz target '$TARGET' (one of: $ALL_TARGETS all)" >&2; exit 64 ;;
esac

# 1. The instrumented libraries (incremental; EngramCLI pulls in every library).
swift build --scratch-path "$SCRATCH" --target EngramCLI -Xswiftc "$SANITIZE" -Xswiftc -enable-testing \
  >"$SCRATCH.log" 2>&1 || { tail -30 "$SCRATCH.log" >&2; exit 1; }
BIN=$(swift build --scratch-path "$SCRATCH" --show-bin-path)

# 2. The fuzz entry, linked against every library's objects.
OBJECTS=()
for module in CEngramKernels EngramCore EngramStore EngramPostgres EngramVectors EngramEmbeddings Engram EngramAgent EngramHTTP EngramMCP EngramCLI; do
  while IFS= read -r object; do OBJECTS+=("$object"); done < <(find "$BIN/$module.build" -name '*.o' | sort)
done
EXECUTABLE="$SCRATCH/entries/fuzz-$TARGET"
mkdir -p "$SCRATCH/entries"
if [[ ! -x "$EXECUTABLE" || "$SOURCE" -nt "$EXECUTABLE" || "$SCRATCH.log" -nt "$EXECUTABLE" ]]; then
  swiftc "$SANITIZE" -parse-as-library -g -Onone -enable-testing \
    -I "$BIN/Modules" -I "$BIN" \
    -Xcc -fmodule-map-file=Sources/CSQLite/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CBLAS/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CPostgres/module.modulemap \
    $(pkg-config --cflags-only-I libpq | sed 's/-I/-Xcc -I/g') \
    -Xcc -fmodule-map-file="$BIN/CEngramKernels.build/module.modulemap" \
    -Xcc -I -Xcc Sources/CEngramKernels/include \
    -module-name "Fuzz_$TARGET" "$SOURCE" "${OBJECTS[@]}" \
    $(pkg-config --libs sqlite3 openblas libpq) -lm \
    -o "$EXECUTABLE" 2> >(grep -v 'Cannot export local symbol' >&2)
fi

# 3. Run.
WORK="$SCRATCH/corpus/$TARGET"
ARTIFACTS="$SCRATCH/artifacts/$TARGET/"
mkdir -p "$WORK" "$ARTIFACTS"
LOG="$SCRATCH/run-$TARGET.log"
BEFORE=$(find "$ARTIFACTS" -type f | wc -l)
set +e
ASAN_OPTIONS=detect_leaks=0 "$EXECUTABLE" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=3072 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$ARTIFACTS" "$WORK" "Fuzz/corpus/$TARGET" >"$LOG" 2>&1
STATUS=$?
set -e
EXECUTIONS=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$LOG" | grep -Eo '[0-9]+$' | tail -1)
if [[ -z "$EXECUTIONS" ]]; then
  EXECUTIONS=$(grep -Eo 'Done [0-9]+ runs' "$LOG" | grep -Eo '[0-9]+' | tail -1)
fi
CRASHES=$(($(find "$ARTIFACTS" -type f | wc -l) - BEFORE))
echo "fuzz $TARGET executions ${EXECUTIONS:-0} crashes $CRASHES seconds $SECONDS_TO_RUN"
if [[ $STATUS -ne 0 ]]; then
  grep -E 'ERROR|Fatal error|panic|SUMMARY|Test unit written' "$LOG" | head -8 >&2
  exit 1
fi
