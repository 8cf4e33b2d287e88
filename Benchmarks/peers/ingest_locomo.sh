#!/bin/bash
# Ingest of three LoCoMo conversations (26, 30, 41: 1,451 turns) as a new user runs it, two
# `engram` binaries alternated in one run (issue 50):
#   Benchmarks/peers/ingest_locomo.sh ROUNDS OLD_ENGRAM NEW_ENGRAM MODEL...
# e.g. `... 2 /tmp/engram-main .build/release/engram minilm e5-small`. Each run is
# `engram init --db m.sqlite --model MODEL`, then `engram ingest --db m.sqlite 26.json 30.json
# 41.json` timed whole by /usr/bin/time (process start and model load included); one line per
# run: wall seconds, CPU seconds (user + sys of the process), turns per wall second and per CPU
# second, the load average at the end. The precision is the binaries' default unless
# ENGRAM_PRECISION (f32 or int8) is set. The data folder is $LOCOMO_DIR (default
# /work/shared/data/locomo-dev); needs sqlite3, bc and GNU time.
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
      /usr/bin/time -o $dir/time.txt -f "%e %U %S" \
        $bin ingest --db $dir/m.sqlite $data/26.json $data/30.json $data/41.json > $dir/out.txt 2>&1 \
        || { echo "FAILED $which"; cat $dir/out.txt; }
      read wall user sys < $dir/time.txt
      cpu=$(echo "$user + $sys" | bc)
      turns=$(sqlite3 $dir/m.sqlite "select count(*) from embeddings" 2>/dev/null || echo "?")
      echo "round=$round model=$model precision=${ENGRAM_PRECISION:-default} bin=$which embedded=$turns" \
        "wall_s=$wall cpu_s=$cpu turns_per_s=$(echo "$turns / $wall" | bc -l | cut -c1-6)" \
        "turns_per_cpu_s=$(echo "$turns / $cpu" | bc -l | cut -c1-6) load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
rm -rf $dir
