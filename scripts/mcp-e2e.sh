#!/usr/bin/env bash
# Runs Tests/mcp_client_test.py (the official MCP Python SDK) against the debug `engram`:
# stdio, and Streamable HTTP (`engram mcp --http`, JSON and event-stream responses).
# Creates .venv-mcp once and installs mcp>=1.28,<2 only when it is missing; idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-mcp"
python="$venv/bin/python"

sdk_ok() {
  "$python" - <<'PY' 2>/dev/null
import importlib.metadata as metadata, sys
major, minor = (int(part) for part in metadata.version("mcp").split(".")[:2])
sys.exit(0 if (1, 28) <= (major, minor) < (2, 0) else 1)
PY
}

if [ ! -x "$python" ]; then
  echo "mcp-e2e: creating $venv" >&2
  python3 -m venv "$venv"
fi
if ! sdk_ok; then
  echo "mcp-e2e: installing mcp>=1.28,<2 into $venv" >&2
  "$python" -m pip install --quiet --disable-pip-version-check 'mcp>=1.28,<2'
fi

binary="${ENGRAM_BINARY:-}"
if [ -z "$binary" ]; then
  binary="$(cd "$root" && swift build --show-bin-path)/engram"
  [ -x "$binary" ] || (cd "$root" && swift build --product engram >&2)
fi
exec "$python" "$root/Tests/mcp_client_test.py" "$binary"
