"""Python names for MCP servers and tools, and the compact lines the template renders — pure, from a lock."""
from __future__ import annotations

import json
from typing import Any

import pytest

from codeact.lifecycle.refresh import BEGIN, DEFAULT_MCP_CONTEXT_BYTES, END, context_budget, mcp_section
from codeact.mcp.exposure import build_catalog, identifier, result_type
from codeact.mcp.render import render_server_lines, render_tool_lines, short_description


def tool(name: str, props: dict[str, Any] | None = None, required: list[str] | None = None,
         output: dict[str, Any] | None = None, description: str = "Does a thing.") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "input_schema": schema, "output_schema": output}


def lock(**servers: list[dict[str, Any]] | str) -> dict[str, Any]:
    out: dict[str, Any] = {"version": 1, "servers": {}}
    for name, tools in servers.items():
        failed = isinstance(tools, str)
        out["servers"][name.replace("__", "-")] = {
            "transport": "stdio", "config_hash": "sha256:0", "scope": "workspace", "source": ".mcp.json",
            "tools_filter": ["*"], "status": "failed" if failed else "ok", "reason": tools if failed else None,
            "tools": [] if failed else tools}
    return out


def test_identifier() -> None:
    assert identifier("get-item") == "get_item"
    assert identifier("a.b c") == "a_b_c"
    assert identifier("2fa") == "_2fa"
    assert identifier("class") == "class_"
    assert identifier("match") == "match_"


def test_names_sanitised_reserved_and_collisions_warned() -> None:
    catalog = build_catalog(lock(
        time=[tool("now")],                      # a module the sandbox ships: would hide `import time`
        grep=[tool("x")],                        # a built-in tool name
        my__srv=[tool("get-item"), tool("get_item"), tool("list")],
        my_srv=[tool("a")],
    ))
    # names that already are identifiers keep them; the others get _2, _3 ...
    assert [t.name for t in catalog.tools] == [
        "grep_.x", "my_srv.a", "my_srv_2.get_item", "my_srv_2.get_item_2", "my_srv_2.list", "time_.now"]
    back = {t.name: t.real_name for t in catalog.tools}
    assert back["my_srv_2.get_item"] == "my-srv.get_item" and back["my_srv_2.get_item_2"] == "my-srv.get-item"
    assert catalog.warnings == [
        "MCP server names 'my_srv' and 'my-srv' both become 'my_srv'; 'my-srv' is exposed as 'my_srv_2'",
        "MCP tools my-srv.get_item and my-srv.get-item both become my_srv_2.get_item; the second is exposed as "
        "my_srv_2.get_item_2",
    ]
    assert catalog.find("my-srv", "get-item") is catalog.find("my_srv_2", "get_item_2")


def test_every_module_the_sandbox_imports_is_reserved() -> None:
    """A server named like a module the sandbox bundles would be hidden by ``import`` of it (or hide it): each
    standard module that imports in bare pydantic-monty without asking the host is in SANDBOX_MODULES."""
    import sys

    pm = pytest.importorskip("pydantic_monty")
    from codeact.mcp.exposure import SANDBOX_MODULES

    bundled = set()
    with pm.Monty(max_processes=1) as pool:
        for module in sorted(m for m in sys.stdlib_module_names if not m.startswith("_")):
            with pool.checkout(limits={"max_feed_duration_secs": 5.0}) as session:
                try:
                    if isinstance(session.feed_start(f"import {module}"), pm.MontyComplete):
                        bundled.add(module)
                except pm.MontyError:
                    pass
    assert {"json", "re", "fnmatch"} <= bundled  # the probe works
    assert bundled <= SANDBOX_MODULES, sorted(bundled - SANDBOX_MODULES)


def test_failed_and_excluded_servers_expose_nothing() -> None:
    data = lock(ok=[tool("t")], down="no answer within 10 s", skipped=[tool("u")])
    assert [t.name for t in build_catalog(data, exclude=["skipped"]).tools] == ["ok.t"]
    assert build_catalog(None).tools == []


def test_result_types_and_sdk_wrapped_primitives() -> None:
    assert result_type(None) == ("Any", False)
    assert result_type({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}) \
        == ("int", True)
    assert result_type({"type": "object", "properties": {"result": {"type": "integer"}}}) == ("dict", False)
    assert result_type({"type": "object", "properties": {"a": {"type": "string"}}}) == ("dict", False)


def test_render_tool_lines_compact_sorted_deterministic() -> None:
    data = lock(
        github=[tool("search_issues", {"q": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
                     ["q"], {"type": "object", "properties": {"items": {"type": "array"}}},
                     "Search issues and pull requests.\nLong details that are not rendered."),
                tool("get-me", description="")],
        time=[tool("now", {"tz": {"type": "string"}}, ["tz"],
                   {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
                   "x" * 150)],
        broken="crashed")
    lines = render_tool_lines(data)
    assert lines == [
        "github.get_me() -> Any",
        "github.search_issues(q: str, limit: int = 10) -> dict — Search issues and pull requests.",
        "time_.now(tz: str) -> str — " + "x" * 100 + "…",
    ]
    assert render_tool_lines(data) == lines
    assert render_tool_lines(data, exclude=["github"]) == lines[2:]
    assert render_server_lines(data) == ["broken: unavailable (crashed)", "github: 2 tool(s)",
                                         "time (as `time_`): 1 tool(s)"]


def test_short_description_cuts_at_a_word() -> None:
    assert short_description("Fetch a URL and return the page as markdown, converting HTML and following redirects "
                             "up to five times.", 60) == "Fetch a URL and return the page as markdown, converting…"
    assert short_description("\n\n  First line.  \nSecond") == "First line."


def test_render_command_prints_the_lines_of_a_workspace(tmp_path, capsys) -> None:
    from codeact.mcp.lock import write_lock
    from codeact.mcp.render import main

    write_lock(tmp_path, lock(demo=[tool("ping", description="Answer pong.")]))
    assert main(["--workspace", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "demo.ping() -> Any — Answer pong.\n"
    assert main(["--workspace", str(tmp_path), "--servers"]) == 0
    assert capsys.readouterr().out == "demo: 1 tool(s)\n"


def many(servers: int, tools: int) -> dict[str, Any]:
    return lock(**{f"srv{i:03d}": [tool(f"tool_{j}") for j in range(tools)] for i in range(servers)})


@pytest.mark.parametrize("servers, tools", [(1, 3), (3, 100), (12, 7), (400, 2)])
@pytest.mark.parametrize("budget", [2048, 1024, 700])
def test_the_mcp_section_fits_its_byte_budget_in_whole_lines(servers: int, tools: int, budget: int) -> None:
    data = many(servers, tools)
    data["servers"]["broken"] = lock(broken="did not start within 60 s")["servers"]["broken"]
    section = mcp_section(data, ".codeact/bin/codeact", budget=budget)
    assert len(section.encode()) <= budget
    lines = section.splitlines()
    assert lines[0] == BEGIN and lines[-1] == END
    assert lines[-2].startswith("`.codeact/bin/codeact tools [SERVER]` lists the tools") and \
        "`.codeact/bin/codeact search WORDS` finds them" in lines[-2]
    listed = [line for line in lines if line.startswith("- ")]
    names = [f"- `srv{i:03d}`" for i in range(servers)]
    for line in listed:  # whole lines: a server with all its tool names, its count, or the "more" line
        assert line.startswith("- … and ") or line.startswith("- `broken`: unavailable (") or any(
            line in (f"{n}: {tools} tools", f"{n}: " + ", ".join(f"tool_{j}" for j in sorted(range(tools), key=str)))
            for n in names), line
    shown = sum(1 for line in listed if not line.startswith("- … and "))
    if shown < servers + 1:
        assert listed[-1] == f"- … and {servers + 1 - shown} more server(s)"
    assert mcp_section(data, ".codeact/bin/codeact", budget=budget) == section  # deterministic


def test_small_servers_keep_their_tool_names_next_to_a_big_one() -> None:
    data = lock(big=[tool(f"t{i:04d}") for i in range(1000)], demo=[tool("add"), tool("echo")])
    section = mcp_section(data, "codeact")
    assert "- `big`: 1000 tools" in section and "- `demo`: add, echo" in section
    assert len(section.encode()) <= DEFAULT_MCP_CONTEXT_BYTES == 2048


def test_the_budget_is_a_setting(tmp_path) -> None:
    assert context_budget(tmp_path) == 2048
    (tmp_path / ".codeact").mkdir()
    (tmp_path / ".codeact" / "settings.json").write_text(json.dumps({"mcp_context_bytes": 900}))
    assert context_budget(tmp_path) == 900
    (tmp_path / ".codeact" / "settings.json").write_text(json.dumps({"mcp_context_bytes": "lots"}))
    assert context_budget(tmp_path) == 2048
