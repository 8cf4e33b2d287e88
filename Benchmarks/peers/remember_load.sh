#!/bin/bash
# One-shot `engram remember` of one text with multilingual-e5-small at int8, where the
# process's time is mostly the model's load: an OLD binary against a NEW one whose smoothing
# keeps its channel maxima beside the model (`BertModel.SmoothingCache`), the NEW one run with
# that file absent (a first load: the calibration pass, then the file written) and present (a
# later load):
#   Benchmarks/peers/remember_load.sh ROUNDS OLD_ENGRAM NEW_ENGRAM
# e.g. `... 10 /work/main/.build/release/engram .build/release/engram`. The model is copied
# into a temporary folder named by $ENGRAM_E5_MODEL, so the file is written there and not in
# the shared cache. One line per run: wall seconds and CPU seconds (user + sys) by
# /usr/bin/time, the load average; then the medians. Needs GNU time and bc.
set -u
rounds=$1; old=$2; new=$3
dir=$(mktemp -d /tmp/remember-load.XXXX)
model=${ENGRAM_E5_SOURCE:-$HOME/.cache/engram/models/multilingual-e5-small/e5-small-q4.bin}
cp "$model" $dir/e5-small-q4.bin
export ENGRAM_E5_MODEL=$dir/e5-small-q4.bin ENGRAM_PRECISION=int8
for which in old new; do
  bin=$old; [ $which = new ] && bin=$new
  $bin init --db $dir/$which.sqlite --model e5-small > /dev/null
done
run() { # label binary database
  /usr/bin/time -o $dir/time.txt -f "%e %U %S" $2 remember --db $dir/$3.sqlite "Leo is vegetarian" \
    > $dir/out.txt 2>&1 || { echo "FAILED $1"; cat $dir/out.txt; }
  read wall user sys < $dir/time.txt
  cpu=$(echo "$user + $sys" | bc)
  echo "$1 wall_s=$wall cpu_s=$cpu load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a $dir/all.txt
}
for round in $(seq 1 $rounds); do
  run old $old old
  rm -f $dir/e5-small-q4.bin.smoothing
  run new-first $new new
  [ -f $dir/e5-small-q4.bin.smoothing ] || echo "new-first wrote no $dir/e5-small-q4.bin.smoothing"
  run new-later $new new
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for label in old new-first new-later; do
  wall=$(grep "^$label " $dir/all.txt | sed 's/.*wall_s=\([0-9.]*\).*/\1/' | median)
  cpu=$(grep "^$label " $dir/all.txt | sed 's/.*cpu_s=\([0-9.]*\).*/\1/' | median)
  echo "median $label wall_s=$wall cpu_s=$cpu"
done
rm -rf $dir
