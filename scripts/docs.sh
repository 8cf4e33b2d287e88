#!/usr/bin/env bash
# Builds the DocC documentation of the Engram and EngramAgent libraries (`make docs`), and
# fails on any warning: a broken ``symbol link`` in a doc comment or article, a parameter
# documented under a name the declaration lacks, a snippet that is not compiled.
#
#   scripts/docs.sh            archives in .build/docs/<Target>.doccarchive
#
# 1. Every Swift snippet of the articles must appear verbatim in the target's
#    DocCSnippetTests.swift (scripts/check-docc-snippets.py), which the tests compile and run.
# 2. The symbol graphs come from a build of the targets with -emit-symbol-graph, in a scratch
#    folder of its own (.build/docs) so the normal build keeps its flags and stays incremental.
# 3. The toolchain's docc converts each catalog with its module's graphs, warnings as errors.
# Open an archive with `docc preview Sources/Engram/Engram.docc --additional-symbol-graph-dir
# .build/docs/graphs-Engram`, or serve the archive folder as static files.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
TARGETS=${DOCS_TARGETS:-Engram EngramAgent}
scratch=.build/docs
graphs=$PWD/$scratch/symbol-graphs

python3 scripts/check-docc-snippets.py

# docc ships beside swift in every toolchain (Linux has no xcrun; macOS has no docc beside a
# shim swift in /usr/bin).
if command -v xcrun >/dev/null 2>&1 && xcrun --find docc >/dev/null 2>&1; then
  docc=$(xcrun --find docc)
else
  docc=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc
fi
if [ ! -x "$docc" ]; then
  echo "make docs: no docc found at $docc; install a Swift toolchain that ships it (5.6 or newer)" >&2
  exit 1
fi

mkdir -p "$graphs"
# Building EngramAgent builds Engram and every layer below it; each module compiled writes its
# graph (an unchanged module keeps the graph of its last build).
"$SWIFT" build --scratch-path "$scratch" --target EngramAgent \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"

strict=--warnings-as-errors
"$docc" convert --help 2>&1 | grep -q -- --warnings-as-errors || strict=
status=0
for target in $TARGETS; do
  # Only this module's graphs (and its extensions of other modules' types), so the archive
  # documents one module.
  own=$scratch/graphs-$target
  rm -rf "$own"
  mkdir -p "$own"
  cp "$graphs/$target.symbols.json" "$own/"
  for extension in "$graphs/$target"@*.symbols.json; do
    if [ -e "$extension" ]; then cp "$extension" "$own/"; fi
  done
  log=$scratch/$target-docc.log
  if ! "$docc" convert "Sources/$target/$target.docc" --additional-symbol-graph-dir "$own" \
    --output-path "$scratch/$target.doccarchive" --fallback-display-name "$target" \
    --fallback-bundle-identifier "org.engram.$target" $strict >"$log" 2>&1 \
    || grep -q "warning:" "$log"; then
    cat "$log" >&2
    echo "make docs: the $target catalog has warnings (above); fix the doc comment or article each names" >&2
    status=1
  else
    echo "make docs: $scratch/$target.doccarchive"
  fi
done
exit $status
