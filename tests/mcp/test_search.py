"""``codeact search``: tools by name and description, best first, read-only."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeact.cli import main as cli
from codeact.core.tool import Tool
from codeact.mcp.tool_search import search


def tool(name: str, description: str, doc: str = "", source: str = "mcp") -> Tool:
    return Tool(name=name, description=description, parameters={"type": "object", "properties": {}},
                returns="Any", call=lambda **_: None, source=source, doc=doc,  # type: ignore[arg-type]
                original_name=name.replace("_", "-") if source == "mcp" else None)


TOOLS = [
    tool("billing.list_invoices", "List invoices of a customer."),
    tool("billing.pay", "Pay one invoice now."),
    tool("crm.find", "Find customers.", doc="Find customers.\nMatches names, emails and invoice numbers.\n\nMCP..."),
    tool("grep", "Search file contents.", source="builtin"),
]


def test_best_first_name_beats_description_and_more_words_beat_fewer() -> None:
    assert [h.tool.name for h in search(TOOLS, "invoices")] == ["billing.list_invoices"]
    assert [h.tool.name for h in search(TOOLS, "invoice")] == ["billing.list_invoices", "billing.pay", "crm.find"]
    assert [h.tool.name for h in search(TOOLS, "pay invoice")][0] == "billing.pay"
    assert [h.tool.name for h in search(TOOLS, "list-invoices")] == ["billing.list_invoices"]  # real name parts
    assert search(TOOLS, "nothing-like-it") == []
    assert len(search(TOOLS, "invoice", limit=1)) == 1


def test_search_command_text_json_and_exit_code(workspace, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from mcp_helpers import demo

    from codeact.mcp.discovery import discover

    root = workspace({"demo": demo()})
    discover(root, environ={"HOME": str(tmp_path), "COPILOT_HOME": str(tmp_path / "ch")})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert cli(["search", "integers", "--workspace", str(root)]) == 0
    assert capsys.readouterr().out.startswith("demo.add(a: int, b: int = 1) -> int  [mcp]\n    Add two integers.")
    assert cli(["search", "upper", "cased", "--json", "--workspace", str(root)]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["name"] == "demo.echo" and hits[0]["matched"] == 2 and hits[0]["source"] == "mcp"
    assert cli(["search", "zzzqqq", "--workspace", str(root)]) == 1
    assert "no tool matches 'zzzqqq'" in capsys.readouterr().out
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # read-only
