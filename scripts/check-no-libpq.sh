#!/usr/bin/env bash
# Proves that the engine builds and passes its tests on a machine without libpq: only the
# EngramPostgres product needs PostgreSQL's client library (docs/postgres.md).
#
#   scripts/check-no-libpq.sh          build every target that does not need libpq, with the
#                                      tests, and run EngramStoreTests and EngramAgentTests
#                                      ($NO_LIBPQ_TESTS: a --filter; "none" only builds)
#
# How it proves it:
# 1. A copy of the package (the files git knows, in .build/no-libpq/package, kept in sync so
#    the build there stays incremental) without Sources/CPostgres, Sources/EngramPostgres and
#    their tests, whose Package.swift ends with a filter that removes CPostgres and every
#    target depending on it (directly or through another target), and the products of those.
#    The targets that remain are declared exactly as in Package.swift (nothing is edited, only
#    removed). If Engram, EngramStore, EngramAgent or their tests (but EngramTests) need libpq,
#    the filter removes it and the check fails here, naming it.
# 2. The build and the tests run in a mount namespace (unshare) where libpq is gone from the
#    machine: every libpq-fe.h folder, libpq.pc and libpq.so* under /usr is hidden, which the
#    script checks (pkg-config finds no libpq, the compiler no <libpq-fe.h>, the linker no -lpq)
#    before it builds. So nothing can reach libpq through a system path either; and the test
#    binary is checked to load no libpq.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/.build/no-libpq"
copy="$work/package"
tests="${NO_LIBPQ_TESTS:-EngramStoreTests|EngramAgentTests}"
swift="${SWIFT:-swift}"
# The targets that must build without libpq.
# (EngramTests is not yet among them: it still holds the engine's PostgreSQL suites, which
# share its helpers, and links EngramPostgres; see Package.swift.)
required=(EngramCore EngramStore Engram EngramAgent EngramStoreTests EngramAgentTests)

log() { printf 'check-no-libpq: %s\n' "$*" >&2; }

if [ "${1:-}" != "--inside" ]; then
  command -v unshare >/dev/null 2>&1 || { log "needs unshare (util-linux) for a mount namespace"; exit 1; }
  # 1. The copy, without the PostgreSQL targets' folders.
  mkdir -p "$copy"
  # Copied with their times (-p), and only when newer (-u), so the build there stays incremental.
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 -r cp -p -u --parents -t "$copy")
  cp -p "$root/Package.swift" "$copy/Package.swift"
  # Remove what git no longer knows (renamed or deleted files).
  (cd "$root" && git ls-files --cached --others --exclude-standard | sort) >"$work/files"
  (cd "$copy" && find . -path ./.build -prune -o -type f -print | sed 's|^\./||' | sort) >"$work/copied"
  comm -13 "$work/files" "$work/copied" | (cd "$copy" && xargs -r -d '\n' rm -f)
  rm -rf "$copy/Sources/CPostgres" "$copy/Sources/EngramPostgres" "$copy/Tests/EngramPostgresTests" \
    "$copy/Tests/EngramPostgresTestSupport"
  cat >>"$copy/Package.swift" <<'EOF'

// scripts/check-no-libpq.sh: the package without libpq, i.e. without CPostgres, every target
// that depends on it directly or through others, and their products.
do {
  func name(_ dependency: Target.Dependency) -> String? {
    switch dependency {
    case .targetItem(let name, _), .byNameItem(let name, _): return name
    default: return nil
    }
  }
  var removed: Set<String> = ["CPostgres"]
  var grew = true
  while grew {
    grew = false
    for target in package.targets
    where !removed.contains(target.name)
      && target.dependencies.contains(where: { name($0).map(removed.contains) ?? false })
    {
      removed.insert(target.name)
      grew = true
    }
  }
  package.targets.removeAll { removed.contains($0.name) }
  package.products.removeAll { product in
    ((product as? Product.Library)?.targets ?? (product as? Product.Executable)?.targets ?? [])
      .contains(where: removed.contains)
  }
}
EOF
  kept=$(cd "$copy" && "$swift" package dump-package |
    python3 -c 'import json, sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["targets"]))')
  missing=()
  for target in "${required[@]}"; do
    case " $kept " in *" $target "*) ;; *) missing+=("$target") ;; esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "FAILED: ${missing[*]} depend(s) on CPostgres (libpq), directly or through another target;" \
      "only EngramPostgres may (Package.swift)"
    exit 1
  fi
  log "the package without libpq keeps: $kept"
  # 2. The rest in a mount namespace without libpq (-r: also as a user without root, where
  # user namespaces are allowed).
  flag=""
  [ "$(id -u)" -ne 0 ] && flag="-r"
  exec unshare $flag -m --propagation private -- "$0" --inside
fi

# Inside the namespace: hide libpq, check it is gone, build, test.
empty="$work/empty"
mkdir -p "$empty"
: >"$work/empty-file"
while IFS= read -r folder; do
  mount --bind "$empty" "$folder"
done < <(find /usr -name libpq-fe.h -printf '%h\n' 2>/dev/null | sort -u)
while IFS= read -r file; do
  mount --bind "$work/empty-file" "$file"
done < <(find /usr \( -name 'libpq.pc' -o -name 'libpq.so*' -o -name 'libpq.a' \) \( -type f -o -type l \) \
  -exec readlink -f {} \; 2>/dev/null | sort -u)
if pkg-config --exists libpq 2>/dev/null; then log "libpq is still visible to pkg-config"; exit 1; fi
if printf '#include <libpq-fe.h>\n' | cc -E -x c - $(pkg-config --cflags-only-I libpq 2>/dev/null) \
  -I/usr/include/postgresql >/dev/null 2>&1; then
  log "libpq-fe.h is still visible to the compiler"
  exit 1
fi
# (An empty file over libpq.so reads as an empty linker script: -lpq then gives no symbol.)
if printf 'int PQlibVersion(void);\nint main(void) { return PQlibVersion(); }\n' |
  cc -x c - -lpq -o "$work/link-probe" >/dev/null 2>&1; then
  log "the linker still finds libpq's symbols"
  exit 1
fi
log "libpq hidden: no libpq.pc, no libpq-fe.h, no libpq symbols for the linker"

cd "$copy"
# The same flags as `make test`'s build (Makefile).
"$swift" build -Xswiftc -warnings-as-errors -Xcc -O2 --explicit-target-dependency-import-check error \
  --build-tests
bin=$("$swift" build --show-bin-path)
binary=$(find "$bin" -maxdepth 1 -name '*PackageTests.xctest' | head -1)
if [ -z "$binary" ]; then log "no test binary under $bin"; exit 1; fi
if readelf -d "$binary" | grep -q 'libpq'; then log "the test binary needs libpq"; exit 1; fi
log "built without libpq: every target but the PostgreSQL ones, with the tests"
if [ "$tests" = none ]; then exit 0; fi
ENGRAM_TEST_TIMEOUT="${ENGRAM_TEST_TIMEOUT:-1200}" "$swift" test -Xswiftc -warnings-as-errors --skip-build \
  --filter "$tests"
log "passed without libpq: $tests"
