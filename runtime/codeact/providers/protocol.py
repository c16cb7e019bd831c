"""The live-provider wire format: one JSON object per text frame, each with a ``type`` (pure: no I/O).

provider -> server: ``auth``, ``hello``, ``tools.update``, ``tool.result``, ``goodbye``;
server -> provider: ``hello.ack``, ``tool.call``, ``error``. Unknown types parse to :class:`Unknown` (ignored).
:func:`parse` validates a frame into a typed message or raises :class:`ProtocolError` with its ``code``; the
builders return the text of a frame.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import CodeactError

# Error codes of {"type": "error", "code": C, "message": M}.
AUTH_REQUIRED = "AUTH_REQUIRED"  # no token: neither an Authorization header nor a first auth frame
AUTH_FAILED = "AUTH_FAILED"  # a wrong token
BAD_JSON = "BAD_JSON"  # a frame that is not one JSON object
BAD_MESSAGE = "BAD_MESSAGE"  # a known type with missing or mistyped fields, or a binary frame
INVALID_NAME = "INVALID_NAME"  # a provider or tool name that cannot be called from Python
INVALID_SCHEMA = "INVALID_SCHEMA"  # a tool whose parameters are not a JSON Schema object
TOOL_CONFLICT = "TOOL_CONFLICT"  # a provider name taken by a built-in, an MCP server or another provider
NOT_REGISTERED = "NOT_REGISTERED"  # tools.update or tool.result before a hello was accepted
RESULT_TOO_LARGE = "RESULT_TOO_LARGE"  # a tool.result over the tool-result cap
UNKNOWN_CALL = "UNKNOWN_CALL"  # a tool.result whose id is no call waiting (answered late, or never asked)

CODES = (AUTH_REQUIRED, AUTH_FAILED, BAD_JSON, BAD_MESSAGE, INVALID_NAME, INVALID_SCHEMA, TOOL_CONFLICT,
         NOT_REGISTERED, RESULT_TOO_LARGE, UNKNOWN_CALL)


class ProtocolError(CodeactError, ValueError):
    """A frame the server refuses; ``code`` is one of :data:`CODES`, ``str()`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ToolSpec:
    """One tool a provider offers: its name, a one-line description and a JSON Schema of its keyword arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


@dataclass(frozen=True)
class Auth:
    token: str


@dataclass(frozen=True)
class Hello:
    name: str
    tools: tuple[ToolSpec, ...]
    context: str | None = None
    role: str = "provider"


@dataclass(frozen=True)
class ToolsUpdate:
    tools: tuple[ToolSpec, ...]
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    """A provider's answer to ``tool.call`` ``id``: ``result``, or ``error`` (with an optional ``error_code``)."""

    id: str
    result: Any = None
    error: str | None = None
    error_code: str | None = None


@dataclass(frozen=True)
class Goodbye:
    pass


@dataclass(frozen=True)
class HelloAck:
    provider_id: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    tool: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Error:
    code: str
    message: str


@dataclass(frozen=True)
class Unknown:
    """A frame of a type this version does not know; ignored by both sides."""

    type: str


Message = Auth | Hello | ToolsUpdate | ToolResult | Goodbye | HelloAck | ToolCall | Error | Unknown

_SCHEMA_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def parse(text: str | bytes) -> Message:
    """The message in one frame; raises :class:`ProtocolError` (``BAD_JSON``, ``BAD_MESSAGE``, ``INVALID_NAME``,
    ``INVALID_SCHEMA``) for a frame that cannot be used."""
    if isinstance(text, bytes):
        raise ProtocolError(BAD_MESSAGE, "binary frames are not part of the protocol; send JSON in a text frame")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ProtocolError(BAD_JSON, f"the frame is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ProtocolError(BAD_JSON, f"a frame must be one JSON object, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, 'a frame must have a string "type"')
    reader = _READERS.get(kind)
    return reader(data) if reader else Unknown(kind)


def _text(data: Mapping[str, Any], key: str, kind: str, *, optional: bool = False) -> Any:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(BAD_MESSAGE, f'{kind}: "{key}" must be a string')
    return value


def _id(data: Mapping[str, Any], kind: str) -> str:
    value = data.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ProtocolError(BAD_MESSAGE, f'{kind}: "id" must be the string (or number) of its tool.call')
    return str(value)


def _tools(data: Mapping[str, Any], kind: str) -> tuple[ToolSpec, ...]:
    raw = data.get("tools", [])
    if not isinstance(raw, list):
        raise ProtocolError(BAD_MESSAGE, f'{kind}: "tools" must be a list of {{"name", "description", '
                                         '"parameters"}')
    specs: list[ToolSpec] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ProtocolError(BAD_MESSAGE, f'{kind}: each tool must be an object with a string "name"')
        name = item["name"]
        description = item.get("description") or ""
        if not isinstance(description, str):
            raise ProtocolError(BAD_MESSAGE, f'{kind}: tool {name!r}: "description" must be a string')
        parameters = item.get("parameters")
        specs.append(ToolSpec(name, description, {"type": "object"} if parameters is None
                              else check_parameters(parameters, name)))
    if len({s.name for s in specs}) != len(specs):
        dupes = sorted({s.name for s in specs if [t.name for t in specs].count(s.name) > 1})
        raise ProtocolError(TOOL_CONFLICT, f"{kind}: tool names must be unique, {', '.join(dupes)} repeated")
    return tuple(specs)


def check_parameters(parameters: Any, tool: str) -> dict[str, Any]:
    """``parameters`` if it is a JSON Schema of an object (keyword arguments), else :class:`ProtocolError`
    ``INVALID_SCHEMA`` naming ``tool``. Uses ``jsonschema`` when it is installed, else a structural check."""
    if not isinstance(parameters, dict):
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: parameters must be a JSON Schema object, got "
                                            f"{type(parameters).__name__}")
    if parameters.get("type", "object") != "object":
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: parameters must describe an object of keyword "
                                            f"arguments (\"type\": \"object\"), got {parameters.get('type')!r}")
    try:
        from jsonschema import Draft202012Validator, SchemaError
    except ImportError:
        _check_structure(parameters, tool)
    else:
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(top)"
            raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: parameters are not a valid JSON Schema at "
                                                f"{where}: {exc.message}") from None
    return parameters


def _check_structure(schema: Any, tool: str) -> None:
    """The checks that matter when ``jsonschema`` is absent: types, properties, required."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: a schema must be an object, got {schema!r}")
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if any(k not in _SCHEMA_TYPES for k in kinds):
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: unknown schema type {kind!r}")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: \"properties\" must be an object")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ProtocolError(INVALID_SCHEMA, f"tool {tool!r}: \"required\" must be a list of names")
    for sub in [*props.values(), *([schema["items"]] if "items" in schema else []),
                *(s for key in ("anyOf", "oneOf", "allOf") for s in schema.get(key, []))]:
        _check_structure(sub, tool)


def _auth(data: Mapping[str, Any]) -> Auth:
    return Auth(_text(data, "token", "auth"))


def _hello(data: Mapping[str, Any]) -> Hello:
    role = data.get("role", "provider")
    if role != "provider":
        raise ProtocolError(BAD_MESSAGE, f'hello: "role" must be "provider", got {role!r}')
    name = _text(data, "name", "hello")
    return Hello(name, _tools(data, "hello"), _text(data, "context", "hello", optional=True))


def _update(data: Mapping[str, Any]) -> ToolsUpdate:
    remove = data.get("remove") or []
    if not isinstance(remove, list) or not all(isinstance(r, str) for r in remove):
        raise ProtocolError(BAD_MESSAGE, 'tools.update: "remove" must be a list of tool names')
    return ToolsUpdate(_tools(data, "tools.update"), tuple(remove))


def _result(data: Mapping[str, Any]) -> ToolResult:
    call_id = _id(data, "tool.result")
    if data.get("error") is not None:
        error = data["error"]
        message = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
        code = data.get("errorCode")
        return ToolResult(call_id, error=message, error_code=None if code is None else str(code))
    return ToolResult(call_id, result=data["result"] if "result" in data else data.get("data"))


def _ack(data: Mapping[str, Any]) -> HelloAck:
    return HelloAck(str(data.get("providerId", "")))


def _call(data: Mapping[str, Any]) -> ToolCall:
    args = data.get("args") or {}
    if not isinstance(args, dict):
        raise ProtocolError(BAD_MESSAGE, 'tool.call: "args" must be an object')
    return ToolCall(_id(data, "tool.call"), _text(data, "tool", "tool.call"), args)


def _error(data: Mapping[str, Any]) -> Error:
    return Error(str(data.get("code", "")), str(data.get("message", "")))


_READERS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    "auth": _auth, "hello": _hello, "tools.update": _update, "tool.result": _result,
            "goodbye": lambda _d: Goodbye(), "hello.ack": _ack, "tool.call": _call, "error": _error}


def _frame(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def hello_ack(provider_id: str) -> str:
    return _frame({"type": "hello.ack", "providerId": provider_id})


def tool_call(call_id: str, tool: str, args: Mapping[str, Any]) -> str:
    """Raises ``TypeError`` when ``args`` cannot be sent as JSON."""
    return _frame({"type": "tool.call", "id": call_id, "tool": tool, "args": dict(args)})


def error(code: str, message: str) -> str:
    return _frame({"type": "error", "code": code, "message": message})


def auth(token: str) -> str:
    return _frame({"type": "auth", "token": token})


def hello(name: str, tools: Sequence[ToolSpec], context: str | None = None) -> str:
    data: dict[str, Any] = {"type": "hello", "role": "provider", "name": name, "tools": [t.to_json() for t in tools]}
    if context is not None:
        data["context"] = context
    return _frame(data)


def tools_update(tools: Sequence[ToolSpec], remove: Sequence[str] = ()) -> str:
    data: dict[str, Any] = {"type": "tools.update", "tools": [t.to_json() for t in tools]}
    if remove:
        data["remove"] = list(remove)
    return _frame(data)


def tool_result(call_id: str, result: Any) -> str:
    """Raises ``TypeError`` when ``result`` cannot be sent as JSON."""
    return _frame({"type": "tool.result", "id": call_id, "result": result})


def tool_error(call_id: str, message: str, code: str | None = None) -> str:
    data: dict[str, Any] = {"type": "tool.result", "id": call_id, "error": message}
    if code is not None:
        data["errorCode"] = code
    return _frame(data)


def goodbye() -> str:
    return _frame({"type": "goodbye"})


__all__ = ["CODES", "Auth", "Error", "Goodbye", "Hello", "HelloAck", "Message", "ProtocolError", "ToolCall",
           "ToolResult", "ToolSpec", "ToolsUpdate", "Unknown", "check_parameters", "parse"]
