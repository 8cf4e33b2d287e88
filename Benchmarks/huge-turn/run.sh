#!/usr/bin/env bash
# Search time on a memory holding one huge turn against a memory of the same total size in
# ordinary turns (issue 46), and a keyword search without the vector snapshot against one
# with it (issue 51). Hashing-model memories, the release build.
#
#   swift build -c release --product engram
#   Benchmarks/huge-turn/run.sh [SIZES_MB...]        (default: 2 20 200)
#
# Environment: ENGRAM (the binary; default .build/release/engram), WORK (scratch folder;
# default a new temporary one), REPEAT (timed queries per case, median reported; default 5),
# KEYWORD_TURNS (turns of the snapshot case; default 60000; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGRAM=${ENGRAM:-$PWD/.build/release/engram}
WORK=${WORK:-$(mktemp -d)}
REPEAT=${REPEAT:-5}
KEYWORD_TURNS=${KEYWORD_TURNS:-60000}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(2 20 200)
[ -x "$ENGRAM" ] || { echo "no engram binary at $ENGRAM: swift build -c release --product engram" >&2; exit 1; }

# JSONL: "huge" is one turn of SIZE MB (ordinary words, "zebra" near its start and end) plus
# 20 short turns; "ordinary" is turns of about 200 bytes adding up to the same size, "zebra"
# in 1 of 500.
generate() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, random, sys
kind, megabytes, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
random.seed(7)
vocabulary = ["lake", "boat", "morning", "coffee", "train", "garden", "letter", "window", "market",
              "river", "bread", "music", "winter", "friend", "paper", "stone", "light", "table"]
size = int(megabytes * 1_000_000)
def sentence(n):
    return " ".join(random.choice(vocabulary) for _ in range(n)) + "."
with open(path, "w") as out:
    if kind == "huge":
        parts, total = ["The zebra began it."], 0
        while total < size:
            s = sentence(30)
            parts.append(s)
            total += len(s) + 1
        parts.append("The zebra ended it.")
        out.write(json.dumps({"role": "user", "content": " ".join(parts), "session": "huge"}) + "\n")
        for i in range(20):
            out.write(json.dumps({"role": "assistant", "content": sentence(12), "session": "huge"}) + "\n")
    else:
        total, i = 0, 0
        while total < size:
            text = sentence(30) + (" The zebra was there." if i % 500 == 0 else "")
            out.write(json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": text,
                                  "session": f"s{i // 50}"}) + "\n")
            total += len(text)
            i += 1
PY
}

# "WALL CPU": the medians, over REPEAT runs of `engram query ARGS...`, of the wall seconds
# and of the CPU seconds (user + system; steadier on a busy machine).
timed() {
  local walls=() cpus=()
  for _ in $(seq "$REPEAT"); do
    local line
    /usr/bin/time -o "$WORK/time.txt" -f '%e %U %S' "$ENGRAM" query "$@" >/dev/null 2>/dev/null
    line=$(tail -1 "$WORK/time.txt")
    walls+=("$(echo "$line" | awk '{print $1}')")
    cpus+=("$(echo "$line" | awk '{printf "%.2f", $2 + $3}')")
  done
  local middle=$(((REPEAT + 1) / 2))
  echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "${middle}p") $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "${middle}p")"
}

echo "size_mb  kind      ingest_s  hybrid_wall_s hybrid_cpu_s  keyword_wall_s keyword_cpu_s  resident_mb(hybrid)"
for size in "${SIZES[@]}"; do
  for kind in huge ordinary; do
    db="$WORK/$kind-$size.sqlite"
    file="$WORK/$kind-$size.jsonl"
    [ -f "$file" ] || generate "$kind" "$size" "$file"
    if [ ! -f "$db" ]; then
      "$ENGRAM" init --db "$db" --model hashing >/dev/null
      start=$(date +%s.%N)
      "$ENGRAM" ingest --db "$db" "$file" >/dev/null 2>&1
      ingest=$(echo "$(date +%s.%N) - $start" | bc)
    else
      ingest="-"
    fi
    hybrid=$(timed zebra --db "$db" -k 10)
    keyword=$(timed zebra --db "$db" -k 10 --mode keyword)
    /usr/bin/time -o "$WORK/time.txt" -f '%M' "$ENGRAM" query zebra --db "$db" -k 10 >/dev/null 2>&1
    resident=$(tail -1 "$WORK/time.txt")
    read -r hybrid_wall hybrid_cpu <<<"$hybrid"
    read -r keyword_wall keyword_cpu <<<"$keyword"
    printf '%-8s %-9s %-9s %-13s %-13s %-14s %-13s %s\n' "$size" "$kind" "$ingest" "$hybrid_wall" "$hybrid_cpu" \
      "$keyword_wall" "$keyword_cpu" "$((resident / 1024))"
  done
done

if [ "$KEYWORD_TURNS" -gt 0 ]; then
  db="$WORK/keyword-$KEYWORD_TURNS.sqlite"
  if [ ! -f "$db" ]; then
    python3 - "$KEYWORD_TURNS" "$WORK/keyword.jsonl" <<'PY'
import json, random, sys
random.seed(3)
words = ["dentist", "lake", "boat", "coffee", "train", "garden", "letter", "window", "market", "bread"]
with open(sys.argv[2], "w") as out:
    for i in range(int(sys.argv[1])):
        out.write(json.dumps({"role": "user", "content": " ".join(random.choice(words) for _ in range(20)),
                              "session": f"s{i // 100}"}) + "\n")
PY
    "$ENGRAM" init --db "$db" --model hashing >/dev/null
    "$ENGRAM" ingest --db "$db" "$WORK/keyword.jsonl" >/dev/null 2>&1
  fi
  [ -f "$db.vectors" ] || "$ENGRAM" doctor --repair --db "$db" >/dev/null || true
  with=$(timed dentist --db "$db" --mode keyword -k 5)
  mv "$db.vectors" "$db.vectors.aside"
  without=$(timed dentist --db "$db" --mode keyword -k 5)
  mv "$db.vectors.aside" "$db.vectors"
  echo "keyword search, $KEYWORD_TURNS turns (wall s, cpu s): with the snapshot ${with}, without ${without}"
fi
echo "scratch: $WORK"
