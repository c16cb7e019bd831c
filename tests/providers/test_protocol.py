"""The wire format: every message parses to its typed form, every builder makes the exact keys, errors carry codes."""
from __future__ import annotations

import json
import sys

import pytest

from codeact.providers import protocol as wire


def test_each_provider_message_parses_to_its_type():
    spec = {"name": "t", "description": "T.", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}
    assert wire.parse('{"type": "auth", "token": "k"}') == wire.Auth("k")
    hello = wire.parse(json.dumps({"type": "hello", "role": "provider", "name": "n", "tools": [spec], "context": "c"}))
    assert hello == wire.Hello("n", (wire.ToolSpec("t", "T.", spec["parameters"]),), "c")
    assert wire.parse('{"type": "tools.update", "tools": [], "remove": ["t"]}') == wire.ToolsUpdate((), ("t",))
    assert wire.parse('{"type": "tool.result", "id": "c1", "result": [1]}') == wire.ToolResult("c1", [1])
    assert wire.parse('{"type": "tool.result", "id": 7, "data": {"x": 1}}') == wire.ToolResult("7", {"x": 1})
    assert wire.parse('{"type": "tool.result", "id": "c2", "error": "no", "errorCode": "E"}') == \
        wire.ToolResult("c2", error="no", error_code="E")
    assert wire.parse('{"type": "goodbye"}') == wire.Goodbye()
    assert wire.parse('{"type": "later.feature", "x": 1}') == wire.Unknown("later.feature")


def test_a_tool_without_parameters_takes_none():
    hello = wire.parse('{"type": "hello", "name": "n", "tools": [{"name": "t"}]}')
    assert isinstance(hello, wire.Hello) and hello.tools[0].parameters == {"type": "object"}


def test_server_messages_round_trip_with_the_exact_keys():
    assert json.loads(wire.hello_ack("n")) == {"type": "hello.ack", "providerId": "n"}
    assert json.loads(wire.tool_call("c1", "t", {"a": 1})) == {"type": "tool.call", "id": "c1", "tool": "t",
                                                                "args": {"a": 1}}
    assert json.loads(wire.error("TOOL_CONFLICT", "m")) == {"type": "error", "code": "TOOL_CONFLICT", "message": "m"}
    assert wire.parse(wire.tool_call("c1", "t", {"a": 1})) == wire.ToolCall("c1", "t", {"a": 1})
    assert wire.parse(wire.hello_ack("n")) == wire.HelloAck("n")
    assert wire.parse(wire.error("E", "m")) == wire.Error("E", "m")


def test_provider_builders_make_what_parse_reads():
    spec = wire.ToolSpec("t", "T.", {"type": "object"})
    assert wire.parse(wire.hello("n", [spec], "ctx")) == wire.Hello("n", (spec,), "ctx")
    assert "context" not in json.loads(wire.hello("n", [spec]))
    assert wire.parse(wire.tools_update([spec], ["u"])) == wire.ToolsUpdate((spec,), ("u",))
    assert wire.parse(wire.tool_result("c1", None)) == wire.ToolResult("c1", None)
    assert wire.parse(wire.tool_error("c1", "bad", "E")) == wire.ToolResult("c1", error="bad", error_code="E")
    assert wire.parse(wire.auth("k")) == wire.Auth("k")
    assert wire.parse(wire.goodbye()) == wire.Goodbye()
    with pytest.raises(TypeError):
        wire.tool_result("c1", object())


@pytest.mark.parametrize(("frame", "code"), [
    ("{nope", wire.BAD_JSON),
    ("[]", wire.BAD_JSON),
    (b"{}", wire.BAD_MESSAGE),
    ('{"kind": "hello"}', wire.BAD_MESSAGE),
    ('{"type": "hello", "name": "n", "role": "consumer"}', wire.BAD_MESSAGE),
    ('{"type": "hello", "name": "n", "tools": {}}', wire.BAD_MESSAGE),
    ('{"type": "hello", "name": "n", "tools": [{"description": "no name"}]}', wire.BAD_MESSAGE),
    ('{"type": "hello", "name": "n", "tools": [{"name": "a"}, {"name": "a"}]}', wire.TOOL_CONFLICT),
    ('{"type": "hello", "name": "n", "tools": [{"name": "a", "parameters": []}]}', wire.INVALID_SCHEMA),
    ('{"type": "tools.update", "tools": [], "remove": "a"}', wire.BAD_MESSAGE),
    ('{"type": "tool.result", "result": 1}', wire.BAD_MESSAGE),
    ('{"type": "tool.result", "id": true, "result": 1}', wire.BAD_MESSAGE),
    ('{"type": "auth"}', wire.BAD_MESSAGE),
])
def test_bad_frames_raise_with_their_code(frame, code):
    with pytest.raises(wire.ProtocolError) as caught:
        wire.parse(frame)
    assert caught.value.code == code and code in wire.CODES and str(caught.value)


@pytest.mark.parametrize("with_jsonschema", [True, False], ids=["jsonschema", "structural"])
@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": "object", "properties": {"a": {"type": "text"}}},
                                    {"type": "object", "required": "a"}, {"type": "object", "properties": []}])
def test_invalid_schemas_are_refused_with_or_without_jsonschema(monkeypatch, with_jsonschema, schema):
    if not with_jsonschema:
        monkeypatch.setitem(sys.modules, "jsonschema", None)  # import fails: the structural check runs
    with pytest.raises(wire.ProtocolError, match="tool 'lookup'") as caught:
        wire.check_parameters(schema, "lookup")
    assert caught.value.code == wire.INVALID_SCHEMA


@pytest.mark.parametrize("with_jsonschema", [True, False], ids=["jsonschema", "structural"])
def test_a_valid_schema_is_kept(monkeypatch, with_jsonschema):
    if not with_jsonschema:
        monkeypatch.setitem(sys.modules, "jsonschema", None)
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"anyOf": [{"type": "integer"},
                                                                                       {"type": "null"}]}},
              "required": ["q"], "additionalProperties": False}
    assert wire.check_parameters(schema, "lookup") is schema
