#!/usr/bin/env bash
# Creates .venv at the repository root (if missing) and installs the vector-search peers
# (numpy, faiss-cpu, sqlite-vec; pysqlite3-binary when the interpreter's sqlite3
# cannot load extensions) that Benchmarks/peers/vectors_peers.py compares against.
# Python packages are used only by the benchmark peer scripts, never by the library.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
missing=()
for spec in numpy:numpy faiss-cpu:faiss sqlite-vec:sqlite_vec; do
  package="${spec%%:*}"
  module="${spec##*:}"
  if ! "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done
# Some Python builds (e.g. pyenv defaults) lack sqlite3 extension loading, which sqlite-vec
# needs; pysqlite3-binary bundles a recent SQLite that has it.
if ! "$venv/bin/python" -c "import sqlite3, sys; sys.exit(not hasattr(sqlite3.connect(':memory:'), 'enable_load_extension'))" \
  && ! "$venv/bin/python" -c "import pysqlite3" >/dev/null 2>&1; then
  missing+=("pysqlite3-binary")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi
echo "$venv/bin/python"
