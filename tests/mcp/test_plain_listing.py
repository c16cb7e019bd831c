"""Discovery's own client for local servers (codeact.mcp.plain_listing, issue 44.4): it says what the SDK's client
says, reads a plain answer as the SDK reads it, and leaves every other server to the SDK."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import PY, RAW, SERVERS, starts

from codeact.mcp import discovery, plain_listing, prespawn
from codeact.mcp.config import ServerConfig
from codeact.mcp.plain_listing import NotPlain, ToolFields, check_initialized, from_sdk, plain_tool
from codeact.mcp.sessions import describe_failure

pytestmark = pytest.mark.skipif(not prespawn.SUPPORTED, reason="POSIX only: on Windows the SDK starts servers")

RECORDER = str(SERVERS / "recording_server.py")
RUNTIME = str(Path(__file__).resolve().parents[2] / "runtime")
TOOLS = [
    {"name": "a", "description": " Adds. ", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}},
     "annotations": {"readOnlyHint": True, "title": "Add"}, "title": "A"},
    {"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
     "execution": {"taskSupport": "optional"}, "_meta": {"k": 1}},
    {"name": "c", "inputSchema": {"type": "object"}, "icons": [{"src": "data:,", "sizes": ["48x48"], "theme": "dark"}]},
]


def _config(tmp_path: Path, **env: str) -> ServerConfig:
    return ServerConfig(name="rec", transport="stdio", source=".mcp.json", scope="workspace", command=PY,
                        args=(RECORDER,), env={"REC_LOG": str(tmp_path / "log"), **env})


def _list(config: ServerConfig, tmp_path: Path, *, sdk: bool, as_cli: bool = False) -> list[ToolFields]:
    """One listing, by discovery's own client (the server started ahead, as discovery does) or by the SDK."""
    async def go() -> list[ToolFields]:
        with open(tmp_path / "err", "w+", encoding="utf-8") as errlog:
            if sdk:
                listing = discovery._Listing()
                listing.dropped = []
                return list(await discovery._list_tools_with_sdk(config, tmp_path, dict(os.environ), listing,
                                                                 errlog=errlog, as_cli=as_cli, on_listed=None))
            try:
                await prespawn.start({"rec": config}, {"rec": errlog}, tmp_path, dict(os.environ))
                return list(await discovery._list_tools(config, tmp_path, dict(os.environ), errlog=errlog,
                                                        as_cli=as_cli))
            finally:
                await prespawn.stop_all()

    return asyncio.run(go())


def _sent(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "log").read_text().splitlines()
    (tmp_path / "log").unlink()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("as_cli", [False, True], ids=["as CodeAct", "as the CLI"])
@pytest.mark.parametrize("ask", [None, "ping"])
def test_it_sends_what_the_sdk_sends_and_reads_what_it_reads(tmp_path: Path, as_cli: bool, ask: str | None) -> None:
    """Two pages, and a ping from the server in the middle: the same messages, byte for byte as JSON, and the same
    tools, from both clients."""
    config = _config(tmp_path, REC_TOOLS=json.dumps(TOOLS), REC_PAGE="2", **({"REC_ASK": ask} if ask else {}))
    by_sdk = _list(config, tmp_path, sdk=True, as_cli=as_cli)
    sent_by_sdk = _sent(tmp_path)
    plain = _list(config, tmp_path, sdk=False, as_cli=as_cli)
    assert _sent(tmp_path) == sent_by_sdk
    assert plain == by_sdk and [t.name for t in plain] == ["a", "b", "c"]
    assert [m.get("method") for m in sent_by_sdk if "method" in m] == \
        ["initialize", "notifications/initialized", "tools/list", "tools/list"]


def test_what_it_copies_from_the_sdk_is_what_the_sdk_has() -> None:
    from mcp.client.session import DEFAULT_CLIENT_INFO
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    assert plain_listing.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert plain_listing.HANDSHAKE_VERSIONS[-1] == LATEST_HANDSHAKE_VERSION
    assert dict(plain_listing.CLIENT_INFO) == DEFAULT_CLIENT_INFO.model_dump(mode="json", exclude_none=True)


# Values of every JSON type, for each field a tool or an initialize result may carry.
VALUES = [None, "s", "", 0, 1, 1.5, True, False, [], ["x"], [1], {}, {"type": "object"}, {"k": "v"}]


def _variants(base: dict[str, Any], keys: list[str]) -> list[dict[str, Any]]:
    out = [dict(base)]
    for key in keys:
        out.append({k: v for k, v in base.items() if k != key})
        out.extend({**base, key: value} for value in VALUES)
    return out


def _tool_variants() -> list[dict[str, Any]]:
    base = {"name": "t", "title": "T", "description": "d", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True},
            "execution": {"taskSupport": "optional"}, "icons": [{"src": "data:,"}], "_meta": {"k": 1}}
    items = _variants(base, [*base, "input_schema", "output_schema", "extra", "meta"])
    annotations = {"title": "x", "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                   "openWorldHint": False}
    items += [{**base, "annotations": a} for a in _variants(annotations, [*annotations, "read_only_hint", "extra"])]
    items += [{**base, "execution": {"taskSupport": v}} for v in ["forbidden", "optional", "required", "never", *VALUES]]
    items += [{**base, "execution": {"task_support": "required"}}, {**base, "execution": {"x": 1}}]
    icon = {"src": "data:,", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}
    items += [{**base, "icons": [i]} for i in _variants(icon, [*icon, "mime_type", "extra"])]
    items += [{**base, "icons": v} for v in VALUES]
    return items


def test_a_tool_it_reads_is_one_the_sdk_reads_the_same() -> None:
    """Whatever it takes as a plain tool, the SDK's model takes too and gives the same fields; the rest it leaves
    to the SDK (NotPlain). Every field, every JSON type, both spellings of a name."""
    from mcp.types import Tool
    from pydantic import ValidationError

    taken = 0
    for item in _tool_variants():
        try:
            mine = plain_tool(json.loads(json.dumps(item)))
        except NotPlain:
            continue
        taken += 1
        try:
            theirs = from_sdk(Tool.model_validate(item))
        except ValidationError as exc:
            raise AssertionError(f"taken here, refused by the SDK: {item}: {exc}") from None
        assert mine == theirs, item
    assert taken > 20  # the test reads something


def test_a_handshake_it_accepts_is_one_the_sdk_accepts() -> None:
    from mcp.types import InitializeResult
    from pydantic import ValidationError

    base = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": "s", "version": "1", "title": "S"}, "instructions": "use it", "_meta": {}}
    items = _variants(base, [*base, "server_info", "extra"])
    items += [{**base, "protocolVersion": v} for v in ["2024-11-05", "2025-11-25", "2026-07-28", "1999-01-01"]]
    items += [{**base, "serverInfo": i} for i in _variants(base["serverInfo"], ["name", "version", "title",
                                                                               "description", "websiteUrl", "x"])]
    caps = {"prompts": {"listChanged": True}, "resources": {"subscribe": False, "listChanged": True},
            "tools": {"listChanged": False}, "experimental": {"x": {}}, "logging": {}, "completions": {}}
    items += [{**base, "capabilities": c} for c in _variants(caps, [*caps, "sampling", "list_changed"])]
    items += [{**base, "capabilities": {"tools": t}} for t in _variants({"listChanged": True},
                                                                         ["listChanged", "list_changed", "x"])]
    taken = 0
    for item in items:
        try:
            check_initialized(json.loads(json.dumps(item)))
        except NotPlain:
            continue
        taken += 1
        try:
            InitializeResult.model_validate(item)
        except ValidationError as exc:
            raise AssertionError(f"accepted here, refused by the SDK: {item}: {exc}") from None
    assert taken > 10


@pytest.mark.parametrize("case", ["a request from the server", "a tool of another shape", "an error answer"])
def test_a_server_that_does_not_answer_plainly_is_listed_by_the_sdk(tmp_path: Path, case: str) -> None:
    """Started again for the SDK, which reads it its own way: the same outcome as the SDK alone gives."""
    env = {"REC_STARTS": str(tmp_path / "starts")}
    if case == "a request from the server":
        env["REC_ASK"] = "roots/list"
    elif case == "a tool of another shape":
        env["REC_TOOLS"] = json.dumps([{"name": "t", "inputSchema": {"type": "object"}, "unknownKey": 1,
                                        "annotations": {"readOnlyHint": "yes"}}])
    else:
        env["REC_FAIL"] = "tools/list"
    config = _config(tmp_path, **env)

    def outcome(sdk: bool) -> Any:
        try:
            return _list(config, tmp_path, sdk=sdk)
        except Exception as exc:  # noqa: BLE001 - the same failure, said the same way
            return type(exc).__name__, describe_failure(exc)

    by_sdk = outcome(True)
    assert outcome(False) == by_sdk
    assert starts(tmp_path / "starts") == 3  # once for the SDK alone, twice for discovery's client and the SDK
    if case != "an error answer":
        assert [t.name for t in by_sdk] == ["t"]


def test_discovery_of_plain_servers_imports_no_sdk(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    servers = {f"s{i}": {"type": "stdio", "command": PY, "args": [RAW], "env": {"RAW_TOOL_COUNT": "3",
                                                                              "RAW_SCHEMA": '{"type": "object"}'}}
               for i in range(3)}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    code = ("import sys; from codeact.mcp.discovery import discover\n"
            "r = discover(sys.argv[1], timeout=60)\n"
            "print(sorted((n, o.status, len(o.tools)) for n, o in r.outcomes.items()), 'mcp' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": RUNTIME, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('s0', 'ok', 4), ('s1', 'ok', 4), ('s2', 'ok', 4)] False"
