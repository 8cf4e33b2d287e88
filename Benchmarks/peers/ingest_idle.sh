#!/bin/bash
# One `engram ingest` of LoCoMo 26, 30 and 41 under `perf record -a` (scheduler events and
# cpu-clock stacks at 2 kHz), then ingest_idle.py: how long the process had fewer than two
# runnable threads, and what it ran then (issue 50):
#   Benchmarks/peers/ingest_idle.sh ENGRAM [MODEL] [OUT_DIR]
# The precision is the binary's default unless ENGRAM_PRECISION is set; needs perf (as root).
set -eu
bin=$1; model=${2:-e5-small}; out=${3:-$(mktemp -d /tmp/ingest-idle.XXXX)}
data=${LOCOMO_DIR:-/work/shared/data/locomo-dev}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"; rm -f "$out"/m.sqlite*
"$bin" init --db "$out/m.sqlite" --model "$model" > /dev/null
perf record -o "$out/perf.data" -a -g -c 1 -e cpu-clock/period=500000/ -e sched:sched_switch \
  -e sched:sched_wakeup -e sched:sched_wakeup_new -e sched:sched_process_exit -- \
  "$bin" ingest --db "$out/m.sqlite" "$data/26.json" "$data/30.json" "$data/41.json" > /dev/null 2> "$out/perf.log"
perf script -i "$out/perf.data" -F comm,pid,tid,cpu,time,event,trace 2> /dev/null | grep "sched:" > "$out/sched.txt"
perf script -i "$out/perf.data" -F comm,pid,tid,time,event,ip,sym 2> /dev/null > "$out/samples.txt"
python3 "$here/ingest_idle.py" "$out/sched.txt" "$out/samples.txt"
