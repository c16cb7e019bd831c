"""Issue 43.6: a live provider's optional parameter accepts ``None`` (meaning "not given"), as an MCP tool's does."""
from __future__ import annotations

from typing import Any

from test_hub import answer_in_background


def test_none_for_an_optional_parameter_is_left_out_of_the_call(hub, raw, run_program) -> None:
    conn = raw()
    spec = {"name": "find", "description": "Find.", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "since": {"type": "string"}},
        "required": ["query"]}}
    assert conn.hello("notes", [spec])["type"] == "hello.ack"
    seen: list[dict[str, Any]] = []

    def reply(call: dict[str, Any]) -> dict[str, Any]:
        seen.append(call)
        return {"type": "tool.result", "id": call["id"], "result": "found"}

    answer_in_background(conn, reply)
    result = run_program("notes.find(query='x', since=None)", hub.tools())
    assert result.ok, result.error
    assert result.result == "found"
    assert seen[0]["args"] == {"query": "x"}  # None: not given, never `"since": null` against "string"
    shown = hub.tools()["notes.find"].parameters["properties"]["since"]
    assert shown == {"anyOf": [{"type": "string"}, {"type": "null"}]}
