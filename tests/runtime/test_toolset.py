"""A run's tools as one mapping (codeact.core.toolset): the run's own before a shared set, which it never copies."""
from __future__ import annotations

from codeact.core.tool import Tool
from codeact.core.toolset import ToolSet, named_in, namespaces, offers


def tool(name: str) -> Tool:
    return Tool(name=name, description="", parameters={"type": "object"}, returns="str", call=lambda: name)


def test_own_tools_come_first_and_hide_a_shared_tool_or_namespace_of_their_name() -> None:
    shared = {n: tool(n) for n in ("gh.x", "gh.y", "b.z", "mcp_call", "view")}
    tools = ToolSet({"view": tool("view"), "b": tool("b")}, shared, {"gh": ("x", "y"), "b": ("z",)},
                    ("mcp_call", "view"))
    assert list(tools) == ["view", "b", "gh.x", "gh.y", "mcp_call"] and len(tools) == 5
    assert tools["view"] is not shared["view"] and "b.z" not in tools and tools.get("b.z") is None
    assert dict(namespaces(tools)) == {"gh": ("x", "y")}
    assert offers(tools, "gh") and offers(tools, "b") and not offers(tools, "z")
    assert [t.name for t in named_in(tools, "gh.x()")] == ["gh.x", "gh.y"]
    assert [t.name for t in named_in(tools, "mcp_call(server=s, tool=t); b()")] == ["b", "mcp_call"]

    tools.add(tool("gh.live"))  # a live provider's tool joins the namespace it names
    assert namespaces(tools)["gh"] == ("x", "y", "live") and tools["gh.live"].name == "gh.live"


def test_a_plain_dict_is_grouped_the_same_way() -> None:
    tools = {n: tool(n) for n in ("view", "s.t", "s.u")}
    assert dict(namespaces(tools)) == {"s": ("t", "u")} and offers(tools, "s") and not offers(tools, "t")
    assert [t.name for t in named_in(tools, "s.t()")] == ["s.t", "s.u"]
