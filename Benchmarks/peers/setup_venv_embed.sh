#!/usr/bin/env bash
# Creates (or reuses) .venv at the repository root and installs what embed_peers.py needs:
# torch (CPU build) and sentence-transformers. Benchmarks only; the library never runs Python.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "setup_venv_embed: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
fi
if "$venv/bin/python" -c "import torch, sentence_transformers, rank_bm25" 2>/dev/null; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# Prefer a CPU-only torch wheel already on disk (pip's find-links folders): the default torch
# wheel pulls gigabytes of CUDA libraries a CPU benchmark never uses. Else torch by name.
local_wheel=""
for dir in $(printf '%s' "${PIP_FIND_LINKS:-}" | tr ' ,' '\n\n') /opt/wheels; do
  [ -d "$dir" ] || continue
  candidate=$(ls "$dir"/torch-*+cpu-*.whl 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$candidate" ] && { local_wheel="$candidate"; break; }
done
if [ -n "$local_wheel" ]; then
  "$venv/bin/python" -m pip install --quiet "$local_wheel"
else
  "$venv/bin/python" -m pip install --quiet torch
fi
"$venv/bin/python" -m pip install --quiet sentence-transformers rank_bm25
echo "setup_venv_embed: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') ready in $venv" >&2
