"""An MCP server written for the tests with the official SDK (``MCPServer``).

Tools: ``add`` (structured int), ``echo`` (text), ``profile`` (structured object), ``slow`` (sleeps),
``fail`` (raises), ``die`` (kills the process mid-call), ``whoami`` (process and session), ``env`` and ``header``
(what the server received, to test ``${VAR}`` expansion). Behaviour is set by environment variables so one file
serves every case:

- ``DEMO_STARTS_FILE``: append one line per process start (tests assert one session per server per run).
- ``DEMO_START_DELAY``: seconds to sleep before serving (the discovery benchmark uses 0.5).
- ``DEMO_MODE``: ``hang`` (never answers), ``crash`` (exits 3 at start), ``bad_schema`` (a tool whose input
  schema is not an object schema), ``plain`` (normal).
- ``DEMO_TOOLS_SUFFIX``: appended to every tool name (to test sanitising names such as ``get-thing``).

Run ``python demo_server.py`` for stdio, ``python demo_server.py --http PORT`` for streamable HTTP,
``python demo_server.py --sse PORT`` for SSE (all on 127.0.0.1).
"""
from __future__ import annotations

import os
import sys
import time

from pydantic import BaseModel

MODE = os.environ.get("DEMO_MODE", "plain")


def _record_start() -> None:
    path = os.environ.get("DEMO_STARTS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")


_record_start()
if os.environ.get("DEMO_START_DELAY"):
    time.sleep(float(os.environ["DEMO_START_DELAY"]))
if MODE == "crash":
    print("demo server: refusing to start (DEMO_MODE=crash)", file=sys.stderr, flush=True)
    sys.exit(3)
if MODE == "hang":
    while True:  # never reads stdin, never answers initialize
        time.sleep(3600)

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402 - after the cheap failure modes

server = MCPServer("demo")
SUFFIX = os.environ.get("DEMO_TOOLS_SUFFIX", "")


class Profile(BaseModel):
    name: str
    tags: list[str]
    score: float


@server.tool(name="add" + SUFFIX, description="Add two integers.")
def add(a: int, b: int = 1) -> int:
    return a + b


@server.tool(name="echo" + SUFFIX, description="Return the text, upper-cased if asked.", structured_output=False)
def echo(text: str, upper: bool = False) -> str:
    return text.upper() if upper else text


@server.tool(name="profile" + SUFFIX, description="A structured profile for a user name.")
def profile(name: str) -> Profile:
    return Profile(name=name, tags=sorted({name[:1], "demo"}), score=len(name) / 2)


@server.tool(name="slow" + SUFFIX, description="Sleep, then say how long.", structured_output=False)
def slow(seconds: float = 0.2) -> str:
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool(name="fail" + SUFFIX, description="Always raises.")
def fail(message: str = "boom") -> str:
    raise ValueError(message)


@server.tool(name="whoami" + SUFFIX, description="This process and, over HTTP, the MCP session: 'pid:session-id'.",
             structured_output=False)
def whoami(ctx: Context) -> str:
    return f"{os.getpid()}:{(ctx.headers or {}).get('mcp-session-id', '')}"


@server.tool(name="env" + SUFFIX, description="An environment variable of the server process.", structured_output=False)
def env(name: str) -> str:
    return os.environ.get(name, "")


@server.tool(name="header" + SUFFIX, description="A request header (HTTP transports).", structured_output=False)
def header(name: str, ctx: Context) -> str:
    return (ctx.headers or {}).get(name.lower(), "")


@server.tool(name="die" + SUFFIX, description="Kill this server process mid-call.")
def die() -> str:
    os._exit(7)


if MODE == "bad_schema":
    # A tool whose input schema is not an object schema: discovery must reject the server.
    @server.tool(name="weird", description="Bad schema.")
    def weird(x: int) -> int:
        return x

    server._tool_manager.get_tool("weird").parameters = {"type": "string"}


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] in ("--http", "--sse"):
        transport = "streamable-http" if argv[0] == "--http" else "sse"
        server.run(transport, host="127.0.0.1", port=int(argv[1]))
    else:
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
