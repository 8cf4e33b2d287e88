#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: created in a temporary folder, owned and run by an
# unprivileged user, listening only on a Unix socket in that folder (no TCP), with trust
# authentication for that socket alone (nobody else can open the folder).
#
#   scripts/postgres.sh start          prints the folder on line 1 and its libpq URL on line 2
#   scripts/postgres.sh stop FOLDER    stops the cluster and removes the folder
#   scripts/postgres.sh restart FOLDER fast|immediate
#                                      restarts the cluster (pg_ctl restart -m MODE), waiting
#                                      until it accepts connections again
#   scripts/postgres.sh run CMD...     starts one, runs CMD with $ENGRAM_TEST_POSTGRES_URL set
#                                      to its URL, then stops and removes it (also on failure);
#                                      CMD runs under scripts/watchdog.sh, stopped (with what was
#                                      running) after $ENGRAM_TEST_TIMEOUT seconds (default 1200)
#   scripts/postgres.sh sweep          stops and removes the clusters whose owner has died
#
# Each cluster records its owner's pid (the `run` shell, or $ENGRAM_PG_OWNER, else the caller
# of `start`); every `start` first sweeps the clusters whose owner is gone, so a run that was
# killed outright (SIGKILL, a lost machine) leaves nothing running past the next one.
#
# PostgreSQL (15 or later) is installed from apt when missing. Run as root, the cluster runs
# as $ENGRAM_POSTGRES_USER (default: the `postgres` account the package creates, else
# `nobody`), because PostgreSQL refuses to run as root.
set -euo pipefail

log() { printf 'postgres.sh: %s\n' "$*" >&2; }

# The folder holding initdb, pg_ctl and postgres: pg_config's, else the newest Debian one,
# else whatever PATH has.
bindir() {
  local dir
  if command -v pg_config >/dev/null 2>&1; then
    dir=$(pg_config --bindir 2>/dev/null || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

install_if_missing() {
  bindir >/dev/null && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    log "PostgreSQL's server programs (initdb, pg_ctl) are missing; install PostgreSQL 15 or later"
    exit 1
  fi
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "installing postgresql with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
  bindir >/dev/null || { log "postgresql was installed but initdb and pg_ctl are still not found"; exit 1; }
}

# Runs "$@" as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$owner" -- "$@"
  else
    "$@"
  fi
}

pick_owner() {
  if [ "$(id -u)" -ne 0 ]; then
    owner=$(id -un)
  elif [ -n "${ENGRAM_POSTGRES_USER:-}" ]; then
    owner=$ENGRAM_POSTGRES_USER
  elif id postgres >/dev/null 2>&1; then
    owner=postgres
  else
    owner=nobody
  fi
}

# Stops the clusters this script created whose owner process is gone.
sweep() {
  local folder pid
  for folder in /tmp/engram-pg.*; do
    [ -d "$folder" ] || continue
    pid=$(cat "$folder/owner.pid" 2>/dev/null || true)
    case "$pid" in
      '' | *[!0-9]*) continue ;;  # starting (no pid yet) or not ours to judge
    esac
    if ! kill -0 "$pid" 2>/dev/null; then
      log "stopping $folder, left running by process $pid, which is gone"
      stop "$folder"
    fi
  done
}

start() {
  install_if_missing
  local bin folder
  sweep
  bin=$(bindir)
  pick_owner
  # A short path: a Unix socket's path may not exceed about 100 bytes.
  folder=$(mktemp -d /tmp/engram-pg.XXXXXX)
  chmod 700 "$folder"
  echo "${ENGRAM_PG_OWNER:-$PPID}" >"$folder/owner.pid"
  [ "$(id -u)" -eq 0 ] && chown "$owner" "$folder"
  if ! as_owner "$bin/initdb" -D "$folder/data" -U engram --auth=trust --encoding=UTF8 \
    --locale=C.UTF-8 --no-sync >"$folder/initdb.log" 2>&1; then
    log "initdb failed:"
    cat "$folder/initdb.log" >&2
    rm -rf "$folder"
    exit 1
  fi
  # No TCP (listen_addresses empty); the socket lives in the folder. The cluster is thrown
  # away afterwards, so durability settings are off for speed.
  if ! as_owner "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 start \
    -o "-c listen_addresses='' -c unix_socket_directories='$folder' -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >/dev/null; then
    log "the server did not start:"
    cat "$folder/server.log" >&2
    as_owner "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$folder"
    exit 1
  fi
  echo "$folder"
  echo "postgresql://engram@/postgres?host=$folder"
}

stop() {
  local folder=$1 bin
  case "$folder" in
    /tmp/engram-pg.*) ;;
    *) log "refusing to remove '$folder' (not a folder this script created)"; exit 1 ;;
  esac
  [ -d "$folder" ] || return 0
  bin=$(bindir)
  owner=$(stat -c %U "$folder" 2>/dev/null || id -un)
  if [ -f "$folder/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 ||
      as_owner "$bin/pg_ctl" -D "$folder/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$folder"
}

restart() {
  local folder=$1 mode=$2 bin
  case "$folder" in
    /tmp/engram-pg.*) ;;
    *) log "refusing to restart '$folder' (not a folder this script created)"; exit 1 ;;
  esac
  case "$mode" in
    fast | immediate) ;;
    *) log "restart mode must be fast or immediate, not '$mode'"; exit 64 ;;
  esac
  bin=$(bindir)
  owner=$(stat -c %U "$folder")
  # The server keeps the options it was started with (postmaster.opts).
  as_owner "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -m "$mode" -w -t 60 restart >/dev/null
}

case "${1:-}" in
  restart)
    [ $# -eq 3 ] || { log "usage: postgres.sh restart FOLDER fast|immediate"; exit 64; }
    restart "$2" "$3"
    ;;
  start)
    start
    ;;
  sweep)
    sweep
    ;;
  stop)
    [ $# -eq 2 ] || { log "usage: postgres.sh stop FOLDER"; exit 64; }
    stop "$2"
    ;;
  run)
    shift
    [ $# -ge 1 ] || { log "usage: postgres.sh run CMD..."; exit 64; }
    # The cluster belongs to this shell: a later sweep stops it if this shell is killed.
    started=$(ENGRAM_PG_OWNER=$$ start)
    cluster=$(echo "$started" | sed -n 1p)
    trap 'stop "$cluster"' EXIT
    trap 'exit 130' INT TERM
    ENGRAM_TEST_POSTGRES_URL=$(echo "$started" | sed -n 2p)
    export ENGRAM_TEST_POSTGRES_URL
    log "cluster at $cluster"
    status=0
    # Under the watchdog, in the background so that a signal to this shell runs the traps at
    # once (stopping the command's whole process group, then the cluster).
    "$(dirname "$0")/watchdog.sh" "${ENGRAM_TEST_TIMEOUT:-1200}" "$*" "$@" &
    runner=$!
    trap 'kill -TERM "$runner" 2>/dev/null; wait "$runner"; exit 130' INT TERM
    wait "$runner" || status=$?
    exit $status
    ;;
  *)
    log "usage: postgres.sh start | stop FOLDER | restart FOLDER fast|immediate | run CMD... | sweep"
    exit 64
    ;;
esac
