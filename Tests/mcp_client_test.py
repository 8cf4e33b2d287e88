"""End-to-end test of `engram mcp` with the official MCP Python SDK (mcp>=1.28,<2).

Usage: python Tests/mcp_client_test.py PATH/TO/engram

Creates a temporary memory (hashing embedder, no model needed), launches `engram mcp --db TMP`
over stdio, initializes, lists the tools and calls each one, checking the results (the SDK
also validates every structuredContent against the tool's outputSchema). Then the same over
the Streamable HTTP transport (`engram mcp --http 127.0.0.1:0`, JSON bodies and, with --sse,
event streams) with the SDK's streamable HTTP client, plus the transport's own rules: the
bearer token, Host, Origin, a preflight, GET, DELETE, sessions, and the refusal to serve a non-loopback address
without ENGRAM_MCP_TOKEN. Prints one line per check and a closing `N passed, M failed`; exits
non-zero when anything failed.
"""

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # mcp >= 1.2x: the client takes a configured httpx client
    from mcp.client.streamable_http import streamable_http_client as _new_http_client
except ImportError:  # older 1.x
    _new_http_client = None
from mcp.client.streamable_http import streamablehttp_client as _old_http_client

EXPECTED_TOOLS = [
    "memory_search",
    "memory_remember",
    "memory_forget",
    "memory_context",
    "conversation_append",
    "memory_stats",
    "memory_agenda",
    "reminders_deliver",
    "routine_list",
    "routine_run",
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
            await exercise_session(session, checks, "")


async def exercise_session(session, checks, label):
    """Every tool, through an open client session; `label` prefixes the check names."""

    def check(name, condition, detail=""):
        checks.check(label + name, condition, detail)

    initialized = await session.initialize()
    check("initialize names the server", initialized.serverInfo.name == "engram")
    check("initialize offers tools", initialized.capabilities.tools is not None)

    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    check("the tools are listed", sorted(tools) == sorted(EXPECTED_TOOLS), str(sorted(tools)))
    check(
        "every tool has input and output schemas",
        all(tool.inputSchema.get("type") == "object" and tool.outputSchema for tool in listed.tools),
    )
    check("search is read-only", tools["memory_search"].annotations.readOnlyHint is True)
    check("forget is destructive", tools["memory_forget"].annotations.destructiveHint is True)

    remembered = await session.call_tool(
        "memory_remember", {"content": "Maya prefers window seats on trains", "kind": "preference"}
    )
    check("memory_remember succeeds", not remembered.isError, text_of(remembered))
    memory_id = (remembered.structuredContent or {}).get("id")
    check("memory_remember returns an id", isinstance(memory_id, int))

    appended = await session.call_tool(
        "conversation_append",
        {"role": "user", "content": "Book the train to Porto for May 24.", "session": "e2e"},
    )
    check("conversation_append succeeds", not appended.isError, text_of(appended))
    check(
        "conversation_append names its session",
        isinstance((appended.structuredContent or {}).get("session"), int),
    )

    found = await session.call_tool(
        "memory_search", {"query": "window seats", "k": 3, "filters": {"kinds": ["memory"]}}
    )
    hits = (found.structuredContent or {}).get("hits", [])
    check("memory_search finds the memory", bool(hits) and hits[0]["id"] == memory_id, json.dumps(hits))
    check("memory_search text mentions it", "window seats" in text_of(found))

    turns = await session.call_tool("memory_search", {"query": "Porto train", "mode": "keyword"})
    turn_hits = (turns.structuredContent or {}).get("hits", [])
    check("keyword search finds the turn", any(hit["kind"] == "message" for hit in turn_hits))

    context = await session.call_tool("memory_context", {"query": "how does Maya like to travel?", "budget": 400})
    rendered = (context.structuredContent or {}).get("context", "")
    check("memory_context includes the memory", "window seats" in rendered, rendered)

    stats = await session.call_tool("memory_stats", {})
    content = stats.structuredContent or {}
    check(
        "memory_stats counts", content.get("memories") == 1 and content.get("messages") == 1, json.dumps(content)
    )

    delivered = await session.call_tool("reminders_deliver", {})
    check(
        "reminders_deliver answers (nothing due)",
        not delivered.isError and (delivered.structuredContent or {}).get("reminders") == [],
        text_of(delivered),
    )
    routines = await session.call_tool("routine_list", {})
    check(
        "routine_list answers (none yet)",
        not routines.isError and (routines.structuredContent or {}).get("routines") == [],
        text_of(routines),
    )
    unknown = await session.call_tool("routine_run", {"name": "no such routine"})
    check(
        "routine_run of an unknown name is an error result",
        unknown.isError and "routine_list" in text_of(unknown),
        text_of(unknown),
    )
    bad = await session.call_tool("memory_search", {"query": "x", "k": 0})
    check("invalid arguments give an error result", bad.isError and "'k'" in text_of(bad), text_of(bad))

    forgotten = await session.call_tool("memory_forget", {"id": memory_id})
    check(
        "memory_forget succeeds", not forgotten.isError and (forgotten.structuredContent or {}).get("forgotten")
    )
    again = await session.call_tool("memory_forget", {"id": memory_id})
    check("forgetting twice is an error result", again.isError and "memory_search" in text_of(again))

    after = await session.call_tool("memory_stats", {})
    check("the memory is gone", (after.structuredContent or {}).get("memories") == 0)


TOKEN = "e2e-token-0123456789abcdef"


@contextlib.contextmanager
def http_server(binary, db, extra=(), token=None, address="127.0.0.1:0"):
    """`engram mcp --http ADDRESS`; yields (process, endpoint URL read from its log)."""
    environment = dict(os.environ, NO_COLOR="1")
    environment.pop("ENGRAM_MCP_TOKEN", None)
    if token:
        environment["ENGRAM_MCP_TOKEN"] = token
    process = subprocess.Popen(
        [binary, "mcp", "--db", db, "--http", address, *extra],
        env=environment, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    try:
        url = None
        for line in process.stderr:
            found = re.search(r"at (http://\S+/mcp)", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise RuntimeError(f"the server did not start (exit {process.wait()})")
        yield process, url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.asynccontextmanager
async def http_session(url, headers):
    if _new_http_client is not None:
        async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=300)) as client:
            async with _new_http_client(url, http_client=client) as (read, write, _):
                async with ClientSession(read, write) as session:
                    yield session
    else:
        async with _old_http_client(url, headers=headers) as (read, write, _):
            async with ClientSession(read, write) as session:
                yield session


async def exercise_http(binary, folder, checks):
    for mode, extra in (("json", ()), ("sse", ("--sse",))):
        db = os.path.join(folder, f"http-{mode}.sqlite")
        created = subprocess.run([binary, "init", "--db", db, "--model", "hashing"], capture_output=True, text=True)
        checks.check(f"http/{mode}: engram init", created.returncode == 0, created.stderr)
        with http_server(binary, db, extra, token=TOKEN) as (process, url):
            async with http_session(url, {"Authorization": f"Bearer {TOKEN}"}) as session:
                await exercise_session(session, checks, f"http/{mode}: ")
            await transport_rules(url, checks, f"http/{mode}: ", sse=mode == "sse")
            checks.check(f"http/{mode}: the server is still running", process.poll() is None)

    # Loopback without a token: no Authorization needed.
    db = os.path.join(folder, "http-json.sqlite")
    with http_server(binary, db) as (_, url):
        async with http_session(url, {}) as session:
            await session.initialize()
            listed = await session.list_tools()
            checks.check("http: loopback serves without a token", len(listed.tools) == len(EXPECTED_TOOLS))

    # Any other address: refused without ENGRAM_MCP_TOKEN, before listening.
    refused = subprocess.run(
        [binary, "mcp", "--db", db, "--http", "0.0.0.0:0"],
        env={k: v for k, v in os.environ.items() if k != "ENGRAM_MCP_TOKEN"}, capture_output=True, text=True, timeout=60,
    )
    checks.check(
        "http: 0.0.0.0 without ENGRAM_MCP_TOKEN is refused",
        refused.returncode != 0 and "ENGRAM_MCP_TOKEN" in refused.stderr,
        refused.stderr,
    )
    bad = subprocess.run([binary, "mcp", "--db", db, "--http", "nonsense"], capture_output=True, text=True, timeout=60)
    checks.check("http: a malformed address is a usage error (64)", bad.returncode == 64, bad.stderr)


async def transport_rules(url, checks, label, sse):
    """The transport's HTTP-level rules, with raw requests."""

    def check(name, condition, detail=""):
        checks.check(label + name, condition, detail)

    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(url, json=initialize, headers=accept)
        check("no token: 401 with WWW-Authenticate", response.status_code == 401 and "Bearer" in response.headers.get("www-authenticate", ""))
        response = await client.post(url, json=initialize, headers={**accept, "Authorization": f"Bearer {TOKEN}x"})
        check("wrong token: 401", response.status_code == 401)
        response = await client.post(url, json=initialize, headers={**accept, **auth, "Origin": "http://evil.example"})
        check("foreign Origin: 403", response.status_code == 403)
        response = await client.post(url, json=initialize, headers={**accept, **auth, "Host": "evil.example"})
        check("foreign Host (DNS rebinding): 421", response.status_code == 421, str(response.status_code))
        response = await client.options(url, headers={"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"})
        check("preflight from a loopback origin: 204",
              response.status_code == 204 and response.headers.get("access-control-allow-origin") == "http://localhost:6274",
              str(response.status_code))
        response = await client.post(url, json=initialize, headers={**accept, **auth, "Origin": "http://localhost:3000"})
        check("loopback Origin: accepted", response.status_code == 200, str(response.status_code))
        session = response.headers.get("mcp-session-id", "")
        check("initialize returns a session id", re.fullmatch(r"[0-9a-f]{64}", session) is not None, session)
        expected_type = "text/event-stream" if sse else "application/json"
        check(f"responses are {expected_type}", response.headers.get("content-type", "").startswith(expected_type))
        if sse:
            check("the event carries the result", "event: message" in response.text and '"result"' in response.text)
        headers = {**accept, **auth, "MCP-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        response = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        check("a notification: 202 without body", response.status_code == 202 and response.content == b"")
        response = await client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**accept, **auth})
        check("no session id: 400", response.status_code == 400)
        response = await client.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**headers, "MCP-Session-Id": "0" * 64}
        )
        check("unknown session: 404", response.status_code == 404)
        response = await client.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**headers, "MCP-Protocol-Version": "1999-01-01"}
        )
        check("unsupported protocol version: 400", response.status_code == 400)
        response = await client.post(url, content=b"x" * (5 << 20), headers=headers)
        check("a body over 4 MiB: 413", response.status_code == 413)
        response = await client.post(url, content=b"[1, 2]", headers=headers)
        check("a batch: 400", response.status_code == 400 and response.json()["error"]["code"] == -32600)
        response = await client.get(url, headers={**auth, "Accept": "text/event-stream", "MCP-Session-Id": session})
        check("GET: 405 (no server-initiated stream)", response.status_code == 405)
        response = await client.delete(url, headers={**auth, "MCP-Session-Id": session})
        check("DELETE ends the session: 204", response.status_code == 204)
        response = await client.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=headers)
        check("the ended session: 404", response.status_code == 404)


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
        try:
            asyncio.run(asyncio.wait_for(exercise_http(binary, folder, checks), timeout=300))
        except Exception as error:
            checks.check("http: sessions ran to the end", False, repr(error))
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
