#!/usr/bin/env python3
"""Every suite carries a time limit and the watchdog (docs/concurrency.md).

Checks each test file under Tests/: a top-level type that holds @Test functions must be
marked `@Suite(..., .timeLimit(...), .watchdog)` (an extension is covered by its type's
declaration). Nested suites inherit both traits. A suite whose tests talk to PostgreSQL
(a file that uses PostgresTestServer or PostgresConnection) also carries `.offPool`: libpq
blocks its thread. Exits 1 naming each type that lacks them.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "Tests"
keyword = re.compile(r"\b(struct|enum|class|extension|actor)\s+(\w+)")
problems = []
declared = {}
for path in sorted(root.rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    pending = ""
    while index < len(lines):
        line = lines[index]
        if not line or line[0] in " \t}/#" or line.startswith("import "):
            pending = "" if line and not line.startswith("//") else pending
            index += 1
            continue
        text = line
        # An attribute spread over several lines ends where its parentheses balance.
        while text.count("(") > text.count(")") and index + 1 < len(lines):
            index += 1
            text += " " + lines[index].strip()
        match = keyword.search(text)
        if not match:
            pending += " " + text
            index += 1
            continue
        header = pending + " " + text
        pending = ""
        kind, name = match.group(1), match.group(2)
        end = index + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        body = "\n".join(lines[index:end])
        marked = "@Suite" in header and ".timeLimit(" in header and ".watchdog" in header
        source = "\n".join(lines)
        if kind != "extension" and ("PostgresTestServer" in source or "PostgresConnection(" in source):
            marked = marked and ".offPool" in header
        if kind != "extension":
            declared[name] = marked or declared.get(name, False)
        if "@Test" in body:
            problems.append((kind, name, path.relative_to(root.parent), index + 1, marked))
        index = end + 1

failed = [
    f"{path}:{line}: {kind} {name} has tests but no @Suite(..., .timeLimit(...), .watchdog)"
    " (and .offPool, when it talks to PostgreSQL)"
    for kind, name, path, line, marked in problems
    if not marked and not (kind == "extension" and declared.get(name))
]
for message in failed:
    print(message, file=sys.stderr)
if failed:
    print(f"{len(failed)} suites without a time limit and watchdog (docs/concurrency.md)", file=sys.stderr)
    sys.exit(1)
print(f"check-test-limits: {len(problems)} suites, each with a time limit and the watchdog")
