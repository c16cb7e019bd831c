"""Which MCP tools the sandbox exposes, under which Python names — derived from the lock, deterministically.

Server and tool names are sanitised to Python identifiers (``my-server`` → ``my_server``, ``get-item`` →
``get_item``). A server name that would hide something the program needs (a built-in tool, a Python builtin,
a module the sandbox ships such as ``time`` or ``json``, a keyword) gets a trailing underscore (``time_``).
Two names that sanitise alike are told apart with ``_2``, ``_3`` … (a name that is already an identifier keeps
it; the others follow in sorted order), with a warning. Every :class:`ExposedTool` keeps the map back to the
real names.
"""
from __future__ import annotations

import builtins
import functools
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.catalog import BUILTINS
from ..core.stubs import python_type

GENERIC_TOOL = "mcp_call"
RESOURCE_TOOL = "mcp_resource"  # top-level, so no server's own tool can shadow it
# Modules the sandbox can import (pydantic-monty 1.6; tests/mcp/test_catalog_render.py asks it) and names the
# generated stubs import: a server namespace must not take them, or `import time` in a program would hide the
# `time` server (or the reverse).
SANDBOX_MODULES = frozenset({
    "asyncio", "base64", "collections", "copy", "csv", "dataclasses", "datetime", "functools", "hashlib",
    "itertools", "json", "math", "os", "pathlib", "random", "re", "sys", "time", "typing", "decimal", "binascii",
    "tomllib", "bisect", "fnmatch", "posixpath", "unicodedata", "Any", "Literal",
})
RESERVED = frozenset(set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist) | SANDBOX_MODULES
                     | set(BUILTINS) | {GENERIC_TOOL, RESOURCE_TOOL})


@dataclass(frozen=True)
class ExposedTool:
    """One MCP tool as the sandbox sees it, with the real names it maps back to."""

    server: str  # real server name (the configuration key)
    tool: str  # real tool name (as the server lists it)
    py_server: str  # the namespace the program uses
    py_tool: str  # the attribute the program calls
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    returns: str  # Python annotation of the result
    unwrap: bool  # the server wraps a primitive result as {"result": value}; hand the program the value

    @property
    def name(self) -> str:
        """What the program calls: ``py_server.py_tool``."""
        return f"{self.py_server}.{self.py_tool}"

    @property
    def real_name(self) -> str:
        return f"{self.server}.{self.tool}"

    @property
    def parameters(self) -> dict[str, Any]:
        """The input schema as the sandbox offers it: an optional parameter whose schema refuses ``null`` also
        takes ``None`` (shown ``head: float | None = None``), which means "not given" (:meth:`arguments`)."""
        return optional_takes_none(self.input_schema, self.omit_if_none)

    @functools.cached_property  # read at every call (arguments): the schema is walked once
    def omit_if_none(self) -> frozenset[str]:
        """Optional parameters whose schema refuses ``null``: ``None`` for one of them is left out of the call."""
        return refusing_null(self.input_schema)

    def arguments(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments as the server takes them: ``None`` for an optional parameter means it is left out
        (a server checks ``"head": null`` against ``number`` and refuses it)."""
        return without_none(kwargs, self.omit_if_none)


def refusing_null(schema: Mapping[str, Any]) -> frozenset[str]:
    """The optional parameters of an input ``schema`` whose own schema refuses ``null``."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return frozenset()
    required = set(schema.get("required") or [])
    return frozenset(n for n, p in props.items() if n not in required and not _accepts_null(p))


def optional_takes_none(schema: Mapping[str, Any], omit: frozenset[str]) -> dict[str, Any]:
    """``schema`` with each parameter of ``omit`` (:func:`refusing_null`) also taking ``None``: a Python caller
    writes ``None`` for "not given" (MCP tools and live providers alike)."""
    props = schema.get("properties")
    if not omit or not isinstance(props, dict):
        return dict(schema)
    # a parameter with a default keeps its signature (``limit: int = 10``); one without is shown ``= None``
    widened = {n: ({"anyOf": [p, {"type": "null"}]} if n in omit and "default" not in p else p)
               for n, p in props.items()}
    return {**schema, "properties": widened}


def without_none(kwargs: Mapping[str, Any], omit: frozenset[str]) -> dict[str, Any]:
    """The call's arguments without ``None`` for a parameter of ``omit``: left out, as "not given"."""
    if not omit:
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if not (v is None and k in omit)}


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, dict) or not schema:
        return True  # anything goes
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or schema.get("nullable") is True:
        return True
    if None in (schema.get("enum") or [0]) or ("const" in schema and schema["const"] is None):
        return True
    return any(_accepts_null(s) for key in ("anyOf", "oneOf") for s in schema.get(key) or [])


@dataclass
class Catalog:
    """Every exposed MCP tool (sorted by Python name) and the naming warnings."""

    tools: list[ExposedTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def find(self, server: str, tool: str) -> ExposedTool | None:
        """The tool called ``tool`` on ``server``, by real or Python names."""
        for t in self.tools:
            if (server in (t.server, t.py_server)) and (tool in (t.tool, t.py_tool)):
                return t
        return None

    @property
    def servers(self) -> dict[str, str]:
        """Python namespace → real server name."""
        return {t.py_server: t.server for t in self.tools}


def identifier(name: str) -> str:
    """``name`` as a Python identifier: other characters become ``_``; a leading digit gets ``_`` in front."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name)
    if not text or text[0].isdigit():
        text = "_" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text


def result_type(output_schema: Mapping[str, Any] | None) -> tuple[str, bool]:
    """``(annotation, unwrap)`` for a tool's result.

    No output schema: ``Any`` (the server may still send structured data, else the text). The Python SDK's
    wrapped primitives (an object schema whose only property is a required ``result``) are unwrapped.
    """
    if not output_schema:
        return "Any", False
    props = output_schema.get("properties")
    if isinstance(props, dict) and set(props) == {"result"} and "result" in (output_schema.get("required") or []):
        return python_type(props["result"]), True
    return python_type(dict(output_schema)), False


def _naming_order(name: str) -> tuple[bool, str]:
    """Names that are already identifiers are named first, so they keep their name when another one collides."""
    return identifier(name) != name, name


def _unique(candidate: str, taken: set[str]) -> str:
    if candidate not in taken:
        return candidate
    n = 2
    while f"{candidate}_{n}" in taken:
        n += 1
    return f"{candidate}_{n}"


def build_catalog(lock: Mapping[str, Any] | None, *, exclude: Iterable[str] = ()) -> Catalog:
    """The exposed tools of ``lock``: servers with status ``ok`` that are not in ``exclude``."""
    catalog = Catalog()
    if not lock:
        return catalog
    skip = set(exclude)
    servers = {n: e for n, e in sorted(lock.get("servers", {}).items(), key=lambda item: _naming_order(item[0]))
               if n not in skip and e.get("status") == "ok"}
    taken_ns: set[str] = set()
    by_ns: dict[str, str] = {}
    for server in servers:
        base = identifier(server)
        if base in RESERVED:
            base += "_"
        py_server = _unique(base, taken_ns)
        if py_server != base:
            catalog.warnings.append(f"MCP server names {by_ns[base]!r} and {server!r} both become {base!r}; "
                                    f"{server!r} is exposed as {py_server!r}")
        taken_ns.add(py_server)
        by_ns.setdefault(base, server)
        taken_tools: set[str] = set()
        first: dict[str, str] = {}
        for entry in sorted(servers[server].get("tools", []), key=lambda t: _naming_order(t["name"])):
            base_tool = identifier(entry["name"])
            py_tool = _unique(base_tool, taken_tools)
            if py_tool != base_tool:
                catalog.warnings.append(f"MCP tools {server}.{first[base_tool]} and {server}.{entry['name']} both "
                                        f"become {py_server}.{base_tool}; the second is exposed as "
                                        f"{py_server}.{py_tool}")
            taken_tools.add(py_tool)
            first.setdefault(base_tool, entry["name"])
            returns, unwrap = result_type(entry.get("output_schema"))
            catalog.tools.append(ExposedTool(
                server=server, tool=entry["name"], py_server=py_server, py_tool=py_tool,
                description=entry.get("description") or "", input_schema=entry.get("input_schema") or {},
                output_schema=entry.get("output_schema"), returns=returns, unwrap=unwrap))
    catalog.tools.sort(key=lambda t: (t.py_server, t.py_tool))
    return catalog


__all__ = ["Catalog", "ExposedTool", "GENERIC_TOOL", "RESERVED", "RESOURCE_TOOL", "build_catalog", "identifier",
           "optional_takes_none", "refusing_null", "result_type", "without_none"]
