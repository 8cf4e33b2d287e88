#!/usr/bin/env python3
"""When an ingest leaves a core idle (issue 50): reads `perf script` of a whole-system record
made by ingest_idle.sh and follows the threads of the process perf started.

  ingest_idle.py SCHED_TXT [SAMPLES_TXT]

A thread is running, ready (runnable, waiting for a core: preempted or woken) or sleeping,
from sched_switch, sched_wakeup(_new) and sched_process_exit. Prints the process's span, its
CPU time, and the time with fewer than two of its threads runnable (a core it could not use
however quiet the host; time spent waiting for a core another process held is not counted),
then each such stretch of at least 4 ms with what the process's threads ran in it (from the
cpu-clock samples of SAMPLES_TXT, by the first matching frame name)."""
import bisect
import collections
import re
import sys

EVENT = re.compile(r'^\s*(.+?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$')
SAMPLE = re.compile(r'^\s*(.+?)\s+(-?\d+)/(-?\d+)\s+([\d.]+):\s+\S*cpu-clock')
# What a sample's stack says the thread was doing (the first of these its frames name).
KEYS = ['SmoothingCache', 'BertModel(packed', 'LinearBuilder', 'engram_qgemm_pack', 'E5ModelFile',
        'SentencePiece', 'WordPiece', 'sentenceVectors', 'sqlite3', 'ConversationStream', 'readBack',
        'storeVectors', 'VectorIndex', 'munmap', 'exit_mmap', '_dl_', 'sched_yield']


def main():
    events, tgid = [], {}
    for line in open(sys.argv[1]):
        m = EVENT.match(line)
        if not m:
            continue
        comm, group, tid, cpu, t, name, rest = m.groups()
        events.append((float(t), name, comm, int(tid), rest, int(cpu)))
        tgid[int(tid)] = int(group)
    # The process perf started: named perf-exec until it executes the binary.
    root = None
    for _, _, comm, tid, rest, _ in events:
        named = re.search(r'(?:^|\s)(?:next_)?comm=perf-exec (?:next_)?pid=(\d+)', rest)
        if comm.startswith('perf-exec') or named:
            root = tid if comm.startswith('perf-exec') else int(named.group(1))
            break
    ours = {tid for tid, group in tgid.items() if group == root}
    on_cpu, changes = {}, []
    for t, name, _, _, rest, cpu in events:
        if name in ('sched_wakeup', 'sched_wakeup_new'):
            tid = int(re.search(r'pid=(\d+)', rest).group(1))
            if tid in ours:
                changes.append((t, tid, 'ready'))
        elif name == 'sched_switch':
            m = re.search(r'prev_pid=(\d+).*prev_state=(\S+) ==> .*next_pid=(\d+)', rest)
            prev, state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
            held = on_cpu.get(cpu)
            if held is not None and held != prev and held in ours:
                changes.append((t, held, 'ready'))  # a switch whose record was lost
            if prev in ours:
                changes.append((t, prev, 'ready' if state.startswith('R') else 'sleep'))
            if nxt in ours:
                changes.append((t, nxt, 'run'))
            on_cpu[cpu] = nxt
        elif name == 'sched_process_exit':
            tid = int(re.search(r'pid=(\d+)', rest).group(1))
            if tid in ours:
                changes.append((t, tid, 'sleep'))
    changes.sort(key=lambda change: change[0])
    start, end = changes[0][0], changes[-1][0]
    states, last, cpu_time, under, stretches = {}, start, 0.0, 0.0, []
    for t, tid, state in changes:
        running = sum(1 for s in states.values() if s == 'run')
        runnable = sum(1 for s in states.values() if s in ('run', 'ready'))
        cpu_time += running * (t - last)
        if runnable < 2 and t > last:
            under += t - last
            if stretches and last - stretches[-1][1] < 0.002:
                stretches[-1][1] = t
            else:
                stretches.append([last, t])
        last = t
        states[tid] = state
    print(f'span {end - start:.3f} s  cpu {cpu_time:.3f} s  fewer than two runnable {under:.3f} s  '
          f'threads {len(ours)}')
    if len(sys.argv) < 3:
        return
    samples, current = [], None
    for line in open(sys.argv[2]):
        if not line.strip():
            if current:
                samples.append(current)
            current = None
        elif line[0] not in ' \t':
            m = SAMPLE.match(line)
            current = [int(m.group(3)), float(m.group(4)), []] if m and int(m.group(3)) in ours else None
        elif current is not None:
            parts = line.split(None, 1)
            current[2].append(parts[1].strip() if len(parts) > 1 else '')
    samples.sort(key=lambda sample: sample[1])
    times = [sample[1] for sample in samples]
    for first, last in stretches:
        if last - first < 0.004:
            continue
        seen = collections.Counter()
        for tid, _, stack in samples[bisect.bisect_left(times, first):bisect.bisect_right(times, last)]:
            frames = ' '.join(stack)
            key = next((key for key in KEYS if key in frames), stack[0][:40] if stack else '?')
            seen[(tid % 1000, key)] += 1
        what = '  '.join(f'{tid}:{key}={count}' for (tid, key), count in seen.most_common(4))
        print(f'{first - start:7.3f} s  {last - first:.3f} s  {what}')


main()
