#!/usr/bin/env python3
"""Every Swift snippet of the documentation catalogs compiles and runs (`make docs`).

For each catalog Sources/<Target>/<Target>.docc, every fenced ```swift block of its articles
must appear verbatim, as whole lines, in Tests/<Target>Tests/DocCSnippetTests.swift, which
the test build compiles and whose suite runs the snippets against a temporary memory. Exits
1 naming each article and snippet (by its first line) that is missing, or a catalog without
the test file.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
fence = re.compile(r"^```swift[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
problems = []
checked = 0
catalogs = sorted((root / "Sources").glob("*/*.docc"))
if not catalogs:
    problems.append("no documentation catalog (Sources/<Target>/<Target>.docc) found")
for catalog in catalogs:
    target = catalog.parent.name
    tests = root / "Tests" / f"{target}Tests" / "DocCSnippetTests.swift"
    articles = sorted(catalog.rglob("*.md"))
    snippets = [(article, block) for article in articles for block in fence.findall(article.read_text(encoding="utf-8"))]
    if not snippets:
        continue
    if not tests.exists():
        problems.append(f"{catalog.relative_to(root)}: has Swift snippets but {tests.relative_to(root)} does not exist")
        continue
    source = "\n" + tests.read_text(encoding="utf-8")
    for article, block in snippets:
        checked += 1
        if "\n" + block not in source:
            first = block.strip().splitlines()[0] if block.strip() else "(empty block)"
            problems.append(
                f"{article.relative_to(root)}: the snippet starting `{first}` is not in "
                f"{tests.relative_to(root)} verbatim (copy it there, or the article's copy from there)")

for problem in problems:
    print(f"check-docc-snippets: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check-docc-snippets: {checked} snippets found verbatim in the snippet tests")
