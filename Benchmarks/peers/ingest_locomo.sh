#!/bin/bash
# Ingest of three LoCoMo conversations (26, 30, 41: 1,451 turns) as a new user runs it, two
# `engram` binaries alternated in one run (issue 50):
#   Benchmarks/peers/ingest_locomo.sh ROUNDS OLD_ENGRAM NEW_ENGRAM MODEL...
# e.g. `... 2 /tmp/engram-main .build/release/engram minilm e5-small`. Each run is
# `engram init --db m.sqlite --model MODEL`, then `engram ingest --db m.sqlite 26.json 30.json
# 41.json` timed whole (process start and model load included); one line per run. The data
# folder is $LOCOMO_DIR (default /work/shared/data/locomo-dev); needs sqlite3 and bc.
set -u
rounds=$1; old=$2; new=$3; shift 3
data=${LOCOMO_DIR:-/work/shared/data/locomo-dev}
dir=$(mktemp -d /tmp/ingest-locomo.XXXX)
for round in $(seq 1 $rounds); do
  for model in "$@"; do
    order="old new"; [ $((round % 2)) -eq 0 ] && order="new old"
    for which in $order; do
      bin=$old; [ $which = new ] && bin=$new
      rm -f $dir/m.sqlite*
      $bin init --db $dir/m.sqlite --model $model > /dev/null
      start=$(date +%s.%N)
      $bin ingest --db $dir/m.sqlite $data/26.json $data/30.json $data/41.json > $dir/out.txt 2>&1 || { echo "FAILED $which"; cat $dir/out.txt; }
      end=$(date +%s.%N)
      turns=$(sqlite3 $dir/m.sqlite "select count(*) from embeddings" 2>/dev/null || echo "?")
      echo "round=$round model=$model bin=$which seconds=$(echo "$end - $start" | bc) embedded=$turns turns_per_s=$(echo "1451 / ($end - $start)" | bc -l | cut -c1-6) load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
rm -rf $dir
