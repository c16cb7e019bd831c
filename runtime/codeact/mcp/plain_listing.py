"""Listing a local server's tools without the SDK: ``initialize`` and ``tools/list`` as JSON lines on its pipes.

Discovery of many servers was mostly the SDK's own cost (about half a second of CPU to import, a few milliseconds a
session: issue 44). A local server that answers plainly is listed here and the SDK is not imported: the same
messages the SDK's client sends (tests/mcp/test_plain_listing.py records both), a handshake at a version the SDK
speaks, and tools each of exactly the shapes ``mcp.types.Tool`` reads (:data:`TOOL_FIELDS`). Anything else raises
:class:`NotPlain` before a tool is kept -- an error answer, a request from the server other than ``ping``, a line that
is not JSON, a field of another shape, an early exit -- and discovery lists that server with the SDK instead, which
reads it its own way and says what went wrong.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# What the SDK's ClientSession sends (mcp 2.3: mcp_types.HANDSHAKE_PROTOCOL_VERSIONS[-1], its default clientInfo,
# and its capabilities with and without the sampling and elicitation callbacks); a test keeps them the same.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO: Mapping[str, str] = {"name": "mcp", "version": "0.1.0"}
AS_CLI_CAPABILITIES: Mapping[str, Any] = {"sampling": {}, "elicitation": {"form": {}, "url": {}}}
MAX_LINE = 64 * 1024 * 1024  # bytes of one message; a longer one is left to the SDK
_STOP_WAIT = 2.0  # seconds a server has to exit once its stdin is closed, then after SIGTERM (as the SDK)

_STR, _BOOL, _DICT, _LIST = (str,), (bool,), (dict,), (list,)
# Each field a plain tool may have, by its name on the wire, and the types its value may take (None: absent too).
TOOL_FIELDS: Mapping[str, tuple[type, ...]] = {
    "name": _STR, "title": _STR, "description": _STR, "inputSchema": _DICT, "outputSchema": _DICT,
    "annotations": _DICT, "execution": _DICT, "icons": _LIST, "_meta": _DICT}
REQUIRED = ("name", "inputSchema")
# The annotations a plain tool may carry, by wire name, with the name the SDK's model_dump gives each.
ANNOTATIONS: Mapping[str, tuple[str, tuple[type, ...]]] = {
    "title": ("title", _STR), "readOnlyHint": ("read_only_hint", _BOOL),
    "destructiveHint": ("destructive_hint", _BOOL), "idempotentHint": ("idempotent_hint", _BOOL),
    "openWorldHint": ("open_world_hint", _BOOL)}
TASK_SUPPORT = ("forbidden", "optional", "required")
ICON_FIELDS: Mapping[str, tuple[type, ...]] = {"src": _STR, "mimeType": _STR, "sizes": _LIST, "theme": _STR}
ICON_THEMES = ("light", "dark")
# The initialize result's fields and server info's, as InitializeResult and Implementation read them.
RESULT_FIELDS: Mapping[str, tuple[type, ...]] = {
    "protocolVersion": _STR, "capabilities": _DICT, "serverInfo": _DICT, "instructions": _STR, "_meta": _DICT}
SERVER_INFO_FIELDS: Mapping[str, tuple[type, ...]] = {
    "name": _STR, "title": _STR, "version": _STR, "description": _STR, "websiteUrl": _STR}
# Server capabilities: those whose value is an object of flags, any object, or an object of objects.
CAPABILITY_FLAGS: Mapping[str, tuple[str, ...]] = {
    "prompts": ("listChanged",), "resources": ("subscribe", "listChanged"), "tools": ("listChanged",)}
CAPABILITY_OBJECTS = ("logging", "completions")
CAPABILITY_MAPS = ("experimental", "extensions")


class NotPlain(Exception):
    """The server did not answer plainly: list it with the SDK."""


@dataclass
class ToolFields:
    """What discovery keeps of a listed tool, whichever client read it (annotations as ``model_dump`` gives them)."""

    name: str
    description: str | None
    title: str | None
    input_schema: Any
    output_schema: Any
    annotations: dict[str, Any] | None
    task_support: str | None


def from_sdk(tool: Any) -> ToolFields:
    """The fields of an ``mcp.types.Tool``."""
    annotations = tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations is not None \
        else None
    return ToolFields(tool.name, tool.description, tool.title, tool.input_schema, tool.output_schema, annotations,
                      getattr(tool.execution, "task_support", None))


def plain_tool(item: Any) -> ToolFields:
    """The fields of one listed tool, as the SDK would read them, or :class:`NotPlain`."""
    _check(item, TOOL_FIELDS, "tool")
    if any(item.get(key) is None for key in REQUIRED):
        raise NotPlain(f"a tool without {' or '.join(REQUIRED)}")
    annotations = item.get("annotations")
    if annotations is not None:
        _check(annotations, {wire: types for wire, (_name, types) in ANNOTATIONS.items()}, "annotations")
        annotations = {ANNOTATIONS[wire][0]: value for wire, value in annotations.items() if value is not None}
    execution = item.get("execution")
    task_support = None
    if execution is not None:
        _check(execution, {"taskSupport": _STR}, "execution")
        task_support = execution.get("taskSupport")
        if task_support is not None and task_support not in TASK_SUPPORT:
            raise NotPlain("execution.taskSupport")
    for icon in item.get("icons") or []:
        _check(icon, ICON_FIELDS, "icon")
        if icon.get("src") is None or icon.get("theme") not in (None, *ICON_THEMES) \
                or not all(isinstance(size, str) for size in icon.get("sizes") or []):
            raise NotPlain("icon")
    return ToolFields(item["name"], item.get("description"), item.get("title"), item["inputSchema"],
                      item.get("outputSchema"), annotations, task_support)


def check_initialized(result: Any) -> None:
    """:class:`NotPlain` unless ``result`` is an initialize result the SDK would read as it is and accept."""
    _check(result, RESULT_FIELDS, "initialize result")
    if result.get("protocolVersion") not in HANDSHAKE_VERSIONS:
        raise NotPlain("a protocol version the handshake does not reach")
    info = result.get("serverInfo")
    _check(info, SERVER_INFO_FIELDS, "serverInfo")
    if info.get("name") is None or info.get("version") is None:
        raise NotPlain("serverInfo without name or version")
    capabilities = result.get("capabilities")
    if capabilities is None:
        raise NotPlain("no capabilities")
    for key, value in capabilities.items():
        if value is None:
            continue
        if key in CAPABILITY_FLAGS:
            _check(value, dict.fromkeys(CAPABILITY_FLAGS[key], _BOOL), f"capabilities.{key}")
        elif key in CAPABILITY_OBJECTS or key in CAPABILITY_MAPS:
            if not isinstance(value, dict) or (key in CAPABILITY_MAPS
                                               and not all(isinstance(v, dict) for v in value.values())):
                raise NotPlain(f"capabilities.{key}")
        else:  # tasks (objects of their own) and any other: the SDK reads them
            raise NotPlain(f"capabilities.{key}")


def _check(value: Any, fields: Mapping[str, tuple[type, ...]], what: str) -> None:
    """:class:`NotPlain` unless ``value`` is an object of ``fields`` only, each of its types or null."""
    if not isinstance(value, dict):
        raise NotPlain(f"{what} is not an object")
    for key, item in value.items():
        types = fields.get(key)
        if types is None or (item is not None and type(item) not in types):  # type(): True is no int here
            raise NotPlain(f"{what}.{key}")


class Pipes:
    """One local server's stdin and stdout, as JSON-RPC messages (ids from 1, as the SDK numbers them)."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.buffer = b""
        self.next_id = 1

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send a request and return its result, answering ``ping`` meanwhile; :class:`NotPlain` otherwise."""
        number = self.next_id
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": number, "method": method,
                         **({"params": dict(params)} if params is not None else {})})
        while True:
            message = await self.receive()
            if "method" in message:
                if "id" not in message:
                    continue  # a notification (a log line, list_changed): the SDK passes it by too
                if message["method"] != "ping":
                    raise NotPlain(f"the server asked {message['method']!r}")
                await self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            elif message.get("id") == number and "result" in message and "error" not in message:
                return message["result"]
            else:
                raise NotPlain("an error or an unexpected answer")

    async def send(self, message: Mapping[str, Any]) -> None:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        try:
            await self.process.stdin.send(text.encode() + b"\n")
        except Exception as exc:  # noqa: BLE001 - a closed pipe, an exited server: the SDK says which
            raise NotPlain("the server's stdin is closed") from exc

    async def receive(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_LINE:
                raise NotPlain("a message over the size read here")
            try:
                self.buffer += await self.process.stdout.receive()
            except Exception as exc:  # noqa: BLE001 - end of stream: the server exited
                raise NotPlain("the server closed its stdout") from exc
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line.decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise NotPlain("a line that is not JSON") from exc
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise NotPlain("a message that is not JSON-RPC 2.0")
        return message


async def list_tools(process: Any, *, as_cli: bool = False, pages: int = 100) -> list[ToolFields]:
    """Every page of the tools of the server ``process`` runs (started, not yet spoken to), as the SDK's client
    lists them (``as_cli``: declaring sampling and elicitation, as the Copilot CLI does)."""
    pipes = Pipes(process)
    check_initialized(await pipes.request("initialize", {
        "protocolVersion": HANDSHAKE_VERSIONS[-1], "capabilities": AS_CLI_CAPABILITIES if as_cli else {},
        "clientInfo": CLIENT_INFO}))
    await pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools: list[ToolFields] = []
    cursor = None
    for _page in range(pages):
        result = await pipes.request("tools/list", {"cursor": cursor} if cursor else None)
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            raise NotPlain("a tools/list result without tools")
        cursor = result.get("nextCursor")
        if cursor is not None and not isinstance(cursor, str):
            raise NotPlain("nextCursor")
        tools.extend(plain_tool(item) for item in result["tools"])
        if not cursor:
            break
    return tools


async def stop(process: Any) -> None:
    """Stop a server as the SDK's stdio client does: its stdin closed, then SIGTERM, then SIGKILL, to its group."""
    import anyio

    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)
        with anyio.move_on_after(_STOP_WAIT):
            await process.wait()
            return


__all__ = ["AS_CLI_CAPABILITIES", "CLIENT_INFO", "HANDSHAKE_VERSIONS", "NotPlain", "ToolFields", "check_initialized",
           "from_sdk", "list_tools", "plain_tool", "stop"]
