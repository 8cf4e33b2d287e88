#!/usr/bin/env bash
# Proves that an application can depend on Engram by version (SwiftPM refuses a versioned
# dependency with unsafe flags): clones this repository's last commit into a temporary
# folder, tags the clone 0.1.0, then builds and runs Examples/RecallExample against it.
# Uncommitted changes are not part of the clone: commit before relying on this check.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone --quiet --no-hardlinks "$root" "$work/engram"
git -C "$work/engram" -c user.name=engram-test -c user.email=test@engram.invalid tag 0.1.0
cp -R "$root/Examples/RecallExample" "$work/app"
rm -rf "$work/app/.build"

export ENGRAM_URL="file://$work/engram"
swift build --package-path "$work/app" -Xswiftc -warnings-as-errors 2>&1 | tail -n 3
output=$("$(swift build --package-path "$work/app" --show-bin-path)/RecallExample" "$work/memory.sqlite")
if [[ "$output" != "The garage code is 4512" ]]; then
  echo "example-test: expected the garage code to be recalled, got: $output" >&2
  exit 1
fi
echo "example-test: Examples/RecallExample built against Engram 0.1.0 and recalled: $output"
