"""End-to-end test of `engram mcp` with the official MCP Python SDK (mcp>=1.28,<2).

Usage: python Tests/mcp_client_test.py PATH/TO/engram

Creates a temporary memory (hashing embedder, no model needed), launches `engram mcp --db TMP`
over stdio, initializes, lists the tools and calls each one, checking the results (the SDK
also validates every structuredContent against the tool's outputSchema). Prints one line per
check and a closing `N passed, M failed`; exits non-zero when anything failed.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

EXPECTED_TOOLS = [
    "memory_search",
    "memory_remember",
    "memory_forget",
    "memory_context",
    "conversation_append",
    "memory_stats",
]


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok    {name}")
        else:
            self.failed += 1
            print(f"FAIL  {name} {detail}")


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def exercise(binary, db, checks):
    environment = dict(os.environ, NO_COLOR="1")
    parameters = StdioServerParameters(command=binary, args=["mcp", "--db", db], env=environment)
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            checks.check("initialize names the server", initialized.serverInfo.name == "engram")
            checks.check("initialize offers tools", initialized.capabilities.tools is not None)

            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            checks.check("six tools listed", sorted(tools) == sorted(EXPECTED_TOOLS), str(sorted(tools)))
            checks.check(
                "every tool has input and output schemas",
                all(tool.inputSchema.get("type") == "object" and tool.outputSchema for tool in listed.tools),
            )
            checks.check("search is read-only", tools["memory_search"].annotations.readOnlyHint is True)
            checks.check("forget is destructive", tools["memory_forget"].annotations.destructiveHint is True)

            remembered = await session.call_tool(
                "memory_remember", {"content": "Maya prefers window seats on trains", "kind": "preference"}
            )
            checks.check("memory_remember succeeds", not remembered.isError, text_of(remembered))
            memory_id = (remembered.structuredContent or {}).get("id")
            checks.check("memory_remember returns an id", isinstance(memory_id, int))

            appended = await session.call_tool(
                "conversation_append",
                {"role": "user", "content": "Book the train to Porto for May 24.", "session": "e2e"},
            )
            checks.check("conversation_append succeeds", not appended.isError, text_of(appended))
            checks.check(
                "conversation_append names its session",
                isinstance((appended.structuredContent or {}).get("session"), int),
            )

            found = await session.call_tool(
                "memory_search", {"query": "window seats", "k": 3, "filters": {"kinds": ["memory"]}}
            )
            hits = (found.structuredContent or {}).get("hits", [])
            checks.check("memory_search finds the memory", bool(hits) and hits[0]["id"] == memory_id, json.dumps(hits))
            checks.check("memory_search text mentions it", "window seats" in text_of(found))

            turns = await session.call_tool("memory_search", {"query": "Porto train", "mode": "keyword"})
            turn_hits = (turns.structuredContent or {}).get("hits", [])
            checks.check("keyword search finds the turn", any(hit["kind"] == "message" for hit in turn_hits))

            context = await session.call_tool("memory_context", {"query": "how does Maya like to travel?", "budget": 400})
            rendered = (context.structuredContent or {}).get("context", "")
            checks.check("memory_context includes the memory", "window seats" in rendered, rendered)

            stats = await session.call_tool("memory_stats", {})
            content = stats.structuredContent or {}
            checks.check(
                "memory_stats counts", content.get("memories") == 1 and content.get("messages") == 1, json.dumps(content)
            )

            bad = await session.call_tool("memory_search", {"query": "x", "k": 0})
            checks.check("invalid arguments give an error result", bad.isError and "'k'" in text_of(bad), text_of(bad))

            forgotten = await session.call_tool("memory_forget", {"id": memory_id})
            checks.check(
                "memory_forget succeeds", not forgotten.isError and (forgotten.structuredContent or {}).get("forgotten")
            )
            again = await session.call_tool("memory_forget", {"id": memory_id})
            checks.check("forgetting twice is an error result", again.isError and "memory_search" in text_of(again))

            after = await session.call_tool("memory_stats", {})
            checks.check("the memory is gone", (after.structuredContent or {}).get("memories") == 0)


def main():
    if len(sys.argv) != 2:
        print("usage: mcp_client_test.py PATH/TO/engram", file=sys.stderr)
        return 64
    binary = os.path.abspath(sys.argv[1])
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="engram-mcp-e2e-") as folder:
        db = os.path.join(folder, "memory.sqlite")
        created = subprocess.run([binary, "init", "--db", db, "--model", "hashing"], capture_output=True, text=True)
        checks.check("engram init", created.returncode == 0, created.stderr)
        if created.returncode == 0:
            try:
                asyncio.run(asyncio.wait_for(exercise(binary, db, checks), timeout=120))
            except Exception as error:  # a crash is one failed check, reported with its cause
                checks.check("session ran to the end", False, repr(error))
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
