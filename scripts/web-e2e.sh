#!/usr/bin/env bash
# Runs scripts/web-e2e.py (Selenium, headless Chromium) against the debug `engram serve`:
# chat with confirmation, search, forget, every tab at 360 and 1280 px, no console errors.
# Needs chromium and chromium-driver (apt) and selenium in .venv-mcp: `make setup` installs them.
# Extra arguments go to the script (--screenshots DIR, --turns N, --json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv-mcp/bin/python"
if ! "$python" -c 'import selenium' >/dev/null 2>&1 || ! command -v chromedriver >/dev/null; then
  echo "web-e2e: selenium (.venv-mcp) or chromedriver is missing; run make setup" >&2
  exit 1
fi
binary="${ENGRAM_BINARY:-}"
if [ -z "$binary" ]; then
  binary="$(cd "$root" && swift build --show-bin-path)/engram"
  [ -x "$binary" ] || (cd "$root" && swift build --product engram >&2)
fi
exec "$python" "$root/scripts/web-e2e.py" "$binary" "$@"
