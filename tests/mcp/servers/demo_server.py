"""An MCP server written for the tests with the official SDK (``MCPServer``).

Tools: ``add`` (structured int), ``echo`` (text), ``profile`` (structured object), ``slow`` (sleeps),
``fail`` (raises), ``die`` (kills the process mid-call), ``whoami`` (process and session), ``env`` and ``header``
(what the server received, to test ``${VAR}`` expansion), ``cwd`` (its working folder); results that are not text:
``picture`` (an image and a text), ``sound`` (audio), ``blob`` (an embedded binary resource), ``link`` (a resource
link to the resource ``demo://note``, also readable), and ``ask_model`` / ``ask_user``, which ask the client for
sampling and elicitation. Behaviour is set by environment variables so one file
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

import base64  # noqa: E402

import mcp.types as types  # noqa: E402
from mcp.server.mcpserver import Audio, Context, Image, MCPServer  # noqa: E402 - after the cheap failure modes

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


@server.tool(name="cwd" + SUFFIX, description="The server process's working folder.", structured_output=False)
def cwd() -> str:
    return os.getcwd()


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")  # a PNG header, 29 bytes


@server.tool(name="picture" + SUFFIX, description="An image (PNG) and a caption.", structured_output=False)
def picture() -> list:
    return [Image(data=PNG, format="png"), "a one-pixel picture"]


@server.tool(name="sound" + SUFFIX, description="A short audio clip (WAV).", structured_output=False)
def sound() -> Audio:
    return Audio(data=b"RIFF\x00\x00\x00\x00WAVE", format="wav")


@server.tool(name="blob" + SUFFIX, description="An embedded binary resource.", structured_output=False)
def blob() -> list:
    return [types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
        uri="demo://blob", mime_type="application/octet-stream", blob=base64.b64encode(b"\x00\x01\xfe").decode()))]


@server.tool(name="link" + SUFFIX, description="A link to the resource demo://note.", structured_output=False)
def link() -> list:
    return [types.ResourceLink(type="resource_link", uri="demo://note", name="note", mime_type="text/plain")]


@server.resource("demo://note", mime_type="text/plain")
def note() -> str:
    return "a note from the demo server"


@server.tool(name="ask_model" + SUFFIX, description="Asks the client's model to write text (sampling).",
             structured_output=False)
async def ask_model(ctx: Context) -> str:
    reply = await ctx.session.create_message([types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text="hello"))], max_tokens=5)
    return str(reply)


class Answer(BaseModel):
    ok: bool


@server.tool(name="ask_user" + SUFFIX, description="Asks the user a question (elicitation).", structured_output=False)
async def ask_user(ctx: Context) -> str:
    return str(await ctx.elicit("Proceed?", Answer))


@server.tool(name="die" + SUFFIX, description="Kill this server process mid-call.")
def die() -> str:
    os._exit(7)


if MODE == "bad_schema":
    # A tool whose input schema is not an object schema: discovery drops that tool and keeps the others.
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
