"""What a tool is: a name, a JSON Schema of keyword parameters, a return type and a host function."""
from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Union

from .boundary import Workspace
from .limits import Deadline, Limits

Source = Literal["builtin", "user", "mcp", "live"]


class ToolContext(NamedTuple):
    """What a host tool may use: the workspace policy, the limits, the run's deadline and the user's settings."""

    workspace: Workspace
    limits: Limits
    allow_hosts: tuple[str, ...] = ()  # hosts web_fetch may reach although private (from the user's config)
    environ: Mapping[str, str] = MappingProxyType({})
    deadline: Deadline | None = None  # the run's, carried by the runner (codeact.core.limits.Deadline)

    def run_deadline(self) -> Deadline:
        """The deadline a tool call must end by: the run's in progress, else the one carried here, else (a tool
        called outside a run) ``limits.timeout`` from now. Take it once, when the call starts."""
        return Deadline.current() or self.deadline or Deadline(self.limits.timeout)


class Cut(list):  # type: ignore[type-arg]
    """A list a tool cut to the result limit itself, so that it never held more: ``dropped`` items did not fit.
    The runner reports them as it reports the items it drops. ``within``: the byte limit the tool already sized the
    items to, as the runner counts them; the runner does not measure such a list again."""

    def __init__(self, items: Any = (), dropped: int = 0, within: int | None = None) -> None:
        super().__init__(items)
        self.dropped = dropped
        self.within = within


class Tool(NamedTuple):
    """One function the sandbox can call. ``call`` takes keyword arguments only."""

    name: str  # as called in the sandbox: "view", or "server.tool" for MCP tools
    description: str  # one line
    parameters: dict[str, Any]  # JSON Schema of the keyword arguments
    returns: str  # Python annotation of the result, e.g. "list[dict]"
    call: Callable[..., Any]
    source: Source = "builtin"
    doc: str = ""  # full documentation, shown by `codeact describe`
    original_name: str | None = None  # the server's name for an MCP tool when sanitised
    in_process: bool = False  # starts no process or thread: may stay on the program's CPU (backends.cpu)

    def manifest(self) -> dict[str, Any]:
        """The JSON description `codeact tools --json` prints."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters,
                "returns": self.returns, "source": self.source}


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array",
               type(None): "null"}


def annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON Schema for a Python annotation (the subset tools use)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [annotation_schema(a) for a in typing.get_args(annotation)]
        return {"anyOf": options}
    if origin is Literal:
        return {"enum": list(typing.get_args(annotation))}
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        schema: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = annotation_schema(args[0])
        return schema
    if origin is dict:
        return {"type": "object"}
    return {"type": _JSON_TYPES[annotation]} if annotation in _JSON_TYPES else {}


def annotation_text(annotation: Any) -> str:
    """An annotation as Python source, e.g. ``list[dict]`` or ``str | None``."""
    if annotation is inspect.Parameter.empty:
        return "Any"
    if isinstance(annotation, str):
        return annotation
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def tool_from_function(func: Callable[..., Any], *, name: str | None = None, description: str | None = None,
                       source: Source = "builtin", bind: Any = None, skip_first: bool = False) -> Tool:
    """Build a :class:`Tool` from a function's signature and docstring.

    With ``skip_first`` the first parameter (the :class:`ToolContext`) is not part of the schema, and ``bind``
    is passed to it on every call.
    """
    hints = typing.get_type_hints(func)
    params = list(inspect.signature(func).parameters.values())
    if skip_first:
        params = params[1:]
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        prop = annotation_schema(hints.get(p.name, p.annotation))
        if p.default is p.empty:
            required.append(p.name)
        else:
            prop["default"] = p.default
        properties[p.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    doc = inspect.cleandoc(func.__doc__ or "")
    call = (lambda **kw: func(bind, **kw)) if skip_first else func
    return Tool(
        name=name or func.__name__,
        description=description or (doc.splitlines()[0] if doc else ""),
        parameters=schema,
        returns=annotation_text(hints.get("return", inspect.Parameter.empty)),
        call=call,
        source=source,
        doc=doc,
    )
