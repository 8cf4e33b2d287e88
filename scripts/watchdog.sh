#!/usr/bin/env bash
# Runs a command with a time limit, so that a hang fails with a name instead of holding CI:
#
#   scripts/watchdog.sh SECONDS NAME CMD...
#
# The command runs in a process group of its own. Past SECONDS the watchdog prints NAME, the
# limit and every process of the group still running (with its age and command line), then
# stops the group (SIGTERM, and SIGKILL 10 s later) and exits 124. SIGINT or SIGTERM to the
# watchdog is passed on to the whole group, so nothing the command started outlives it.
# Otherwise it exits with the command's status. See docs/concurrency.md.
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: watchdog.sh SECONDS NAME CMD..." >&2
  exit 64
fi
limit=$1
name=$2
shift 2
case "$limit" in
  '' | *[!0-9]*) echo "watchdog.sh: SECONDS must be a whole number, not '$limit'" >&2; exit 64 ;;
esac

# setsid: a new session and process group whose id is the child's pid (a background job of a
# non-interactive shell is not a group leader, so setsid does not fork).
setsid "$@" <&0 &
child=$!

stop_group() {
  kill -TERM -- "-$child" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 -- "-$child" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$child" 2>/dev/null || true
}

trap 'stop_group; wait "$child" 2>/dev/null; exit 130' INT
trap 'stop_group; wait "$child" 2>/dev/null; exit 143' TERM

started=$SECONDS
while kill -0 "$child" 2>/dev/null; do
  if [ $((SECONDS - started)) -ge "$limit" ]; then
    {
      echo
      echo "WATCHDOG: $name has run past its limit of $limit s; still running:"
      ps -o pid=,etime=,args= -g "$child" 2>/dev/null | sed 's/^/  /' | cut -c1-300
      echo "WATCHDOG: stopping $name"
    } >&2
    stop_group
    wait "$child" 2>/dev/null
    exit 124
  fi
  # A short sleep in the background and `wait`: the traps above run at once on a signal.
  sleep 1 &
  wait $! 2>/dev/null
done
wait "$child"
