#!/usr/bin/env bash
# Creates .venv at the repository root (if missing) and installs the approximate-search
# peers that Benchmarks/peers/ann_peers.py runs: numpy, hnswlib, usearch and faiss-cpu
# (IndexIVFFlat, IndexHNSWFlat), plus matplotlib for Benchmarks/plot_ann.py.
# Python packages are used only by the benchmark scripts, never by the library.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
missing=()
for spec in numpy:numpy hnswlib:hnswlib usearch:usearch faiss-cpu:faiss matplotlib:matplotlib; do
  package="${spec%%:*}"
  module="${spec##*:}"
  if ! "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi
echo "$venv/bin/python"
