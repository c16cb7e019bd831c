"""MCP tools as sandbox :class:`Tool` objects, built from the lock so no server starts until a program calls one."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import notices
from ..core.tool import Tool, ToolContext
from ..core.toolset import group
from ..errors import ConfigError
from .config import LoadedConfig, load_servers
from .exposure import GENERIC_TOOL, RESOURCE_TOOL, Catalog, ExposedTool, build_catalog
from .lock import read_lock

if TYPE_CHECKING:
    from .session_pool import SessionPool


def as_tool(exposed: ExposedTool, call: Callable[..., Any]) -> Tool:
    """The :class:`Tool` for one exposed MCP tool; ``doc`` carries everything ``codeact describe`` shows."""
    doc = [exposed.description or "(the server gives no description)", "",
           f"MCP tool {exposed.tool!r} of server {exposed.server!r}; call it as {exposed.name}(...) with keyword "
           "arguments, or mcp_call(server=..., tool=..., arguments={...}).",
           "Returns: " + ("the server's structured result as Python data (output schema below)"
                          if exposed.output_schema else "structured data if the server sends any, else its text; "
                          "with images, audio or resources, a list of plain dicts ({\"type\": \"image\", "
                          "\"mime_type\", \"data\"} (base64), {\"type\": \"resource_link\", \"uri\"} for "
                          "mcp_resource(server=..., uri=...), ...)")
           + "; a tool error raises RuntimeError."]
    if exposed.real_name != exposed.name:
        doc += ["", f"Original name: {exposed.real_name} (sanitised to a Python name; the Copilot CLI calls it "
                    f"{exposed.server}-{exposed.tool})."]
    if exposed.output_schema:
        doc += ["", "Output schema:", json.dumps(exposed.output_schema, indent=2, sort_keys=True, ensure_ascii=False)]
    first = (exposed.description or "").strip().splitlines()
    # in_process: a call goes to the session the pool holds open; the pool gives the thread every CPU itself for a
    # call that starts the server (codeact.backends.cpu.all_cpus), not around every call
    return Tool(name=exposed.name, description=first[0] if first else "", parameters=exposed.parameters,
                returns=exposed.returns, call=call, source="mcp", doc="\n".join(doc),
                original_name=exposed.real_name, in_process=True)


def mcp_tools(ctx: ToolContext, *, workspace: Path | str | None = None, exclude: Iterable[str] = (),
              lock: Mapping[str, Any] | None = None, warn: Callable[[str], None] | None = None,
              loaded: LoadedConfig | None = None) -> RunTools | dict[str, Tool]:
    """Every MCP tool the lock exposes, plus ``mcp_call`` and ``mcp_resource``; ``{}`` when there are none (nothing
    is imported). ``loaded``: the configuration already read for this run (read here when not given); a tool starts
    its server only as configured there.

    Each tool's ``call`` goes through one lazily-started :class:`~codeact.mcp.session_pool.SessionPool` shared by
    the returned tools: one session per server for the life of this tool set (one run). The tools are built once per
    lock and bound to the pool as the run first uses each: a run pays for the tools it calls, not for every one.
    """
    note = warn or (lambda _m: None)
    root = Path(workspace) if workspace is not None else ctx.workspace.root
    if lock is None:
        try:
            lock = read_lock(root)
        except ConfigError as exc:
            note(f"MCP tools unavailable: {exc}")
            return {}
    built = _built(lock or {}, (exclude,) if isinstance(exclude, str) else tuple(exclude))
    catalog = built.catalog
    if not catalog.tools:
        return {}
    for message in catalog.warnings:
        note(message)
    from .session_pool import SessionPool

    environ = ctx.environ or dict(os.environ)  # the calling run's environment: servers inherit it
    pool = SessionPool(_resolver(load_servers(root, environ) if loaded is None else loaded, environ, lock or {}),
                       cwd=root, environ=environ,
                       call_timeout=lambda: ctx.run_deadline().remaining())  # the time left in the run, at each call
    return RunTools(built, pool, int(ctx.limits.tool_result), lock)


class RunTools(Mapping[str, Tool]):
    """The MCP tools of a lock for one run: each is bound to the run's session pool when the run first uses it.
    ``spaces``/``top``: the names as :class:`codeact.core.toolset.ToolSet` takes them."""

    def __init__(self, built: _Built, pool: SessionPool, cap: int, lock: Mapping[str, Any] | None) -> None:
        self._built, self._pool, self._cap = built, pool, cap
        generic = _generic_tool(pool, built.catalog, lock)
        self._bound: dict[str, Tool] = {
            GENERIC_TOOL: generic._replace(call=_noting_cuts(generic.call, GENERIC_TOOL, cap)),
            RESOURCE_TOOL: _resource_tool(pool, built.catalog)}
        self.spaces, self.top = built.spaces, (GENERIC_TOOL, RESOURCE_TOOL)

    def __getitem__(self, name: str) -> Tool:
        tool = self._bound.get(name)
        if tool is None:
            exposed, unbound = self._built.by_name[name]
            tool = self._bound[name] = unbound._replace(call=_noting_cuts(mcp_caller(self._pool, exposed), name,
                                                                          self._cap))
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._built.by_name or name in self._bound

    def __iter__(self) -> Iterator[str]:
        yield from self._built.by_name
        yield from self.top

    def __len__(self) -> int:
        return len(self._built.by_name) + len(self.top)


class _Built:
    """What a lock yields, whatever the run: its catalog, a :class:`Tool` per exposed tool by name (its ``call`` is
    bound to each run's session pool) and the tools' namespaces."""

    def __init__(self, lock: Mapping[str, Any], exclude: tuple[str, ...]) -> None:
        self.lock = lock  # held: the cache is keyed on its identity
        self.catalog = build_catalog(lock, exclude=exclude)
        self.by_name = {exposed.name: (exposed, as_tool(exposed, _unbound)) for exposed in self.catalog.tools}
        self.spaces = group(self.by_name)


_BUILT: dict[tuple[int, tuple[str, ...]], _Built] = {}


def _built(lock: Mapping[str, Any], exclude: tuple[str, ...]) -> _Built:
    """The catalog and tools of ``lock``, built once per lock object: a lock read again only when its file changed
    (:func:`codeact.mcp.lock.read_lock_kept`) gives the same object, so a warm server builds them once per version
    of the lock, and a run's fixed cost does not grow with the tools configured."""
    key = (id(lock), exclude)
    built = _BUILT.get(key)
    if built is None or built.lock is not lock:
        if len(_BUILT) > 8:
            _BUILT.clear()
        built = _BUILT[key] = _Built(lock, exclude)
    return built


def _unbound(**_kwargs: Any) -> Any:
    raise AssertionError("an MCP tool called before it was bound to a run's session pool")


def mcp_caller(pool: SessionPool, exposed: ExposedTool) -> Callable[..., Any]:
    server, tool, unwrap, schema = exposed.server, exposed.tool, exposed.unwrap, exposed.output_schema

    def call(**kwargs: Any) -> Any:
        return pool.call(server, tool, exposed.arguments(kwargs), unwrap=unwrap, output_schema=schema)

    return call


def _noting_cuts(call: Callable[..., Any], name: str, cap: int) -> Callable[..., Any]:
    """``call``, saying in a note when its text result passes the tool-result limit (the runner keeps its start)."""
    def noted(**kwargs: Any) -> Any:
        result = call(**kwargs)
        if isinstance(result, str) and len(result) * 4 > cap:
            size = len(result.encode("utf-8", "surrogatepass"))
            if size > cap:
                notices.note(f"{name}()", f"returned the first {cap:,} of {size:,} bytes of text (the tool-result "
                                          "limit); ask the server for less (a narrower query, a page, a limit "
                                          "argument)")
        return result

    return noted


def _discover_command() -> str:
    from ..core.config import launcher_invocation

    return launcher_invocation("discover")


def _unknown(server: str, catalog: Catalog, lock: Mapping[str, Any] | None) -> str:
    """Why ``server`` has no tools here, and what to do about it."""
    entry = ((lock or {}).get("servers") or {}).get(server)
    if entry is not None and entry.get("status") != "ok":
        return f"MCP server {server!r} is unavailable ({entry.get('reason') or 'failed'}); fix it, then run " \
               f"{_discover_command()}"
    names = sorted(set(catalog.servers) | set(catalog.servers.values()))
    return (f"no MCP server {server!r} here (servers: {', '.join(names) or 'none'}); a server added to .mcp.json or "
            f"$COPILOT_HOME/mcp-config.json since the tools were listed needs {_discover_command()}")


def _generic_tool(pool: SessionPool, catalog: Catalog, lock: Mapping[str, Any] | None = None) -> Tool:
    def mcp_call(server: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        exposed = catalog.find(server, tool)
        if exposed is None:
            if server not in catalog.servers and server not in catalog.servers.values():
                raise LookupError(_unknown(server, catalog, lock))
            offered = ", ".join(t.real_name for t in catalog.tools if server in (t.server, t.py_server))
            raise LookupError(f"no MCP tool {tool!r} on server {server!r}; its tools: {offered} "
                              "(`codeact search WORDS` finds tools by name and description)")
        if arguments is not None and not isinstance(arguments, dict):
            raise TypeError(f"mcp_call(arguments=...) must be a dict of the tool's arguments, got "
                            f"{type(arguments).__name__}")
        return pool.call(exposed.server, exposed.tool, arguments or {}, unwrap=exposed.unwrap,
                         output_schema=exposed.output_schema)

    return Tool(
        name=GENERIC_TOOL,
        description="Call any exposed MCP tool by its server and tool names (real or Python names).",
        parameters={"type": "object", "additionalProperties": False, "required": ["server", "tool"],
                    "properties": {"server": {"type": "string"},  # no enum: an unknown name gets mcp_call's reason
                                   "tool": {"type": "string"},
                                   "arguments": {"anyOf": [{"type": "object"}, {"type": "null"}], "default": None}}},
        returns="Any", call=mcp_call, source="mcp", in_process=True,  # as as_tool's
        doc="Call any exposed MCP tool by its server and tool names (real or Python names), e.g.\n"
            "    mcp_call(server=\"github\", tool=\"search-issues\", arguments={\"q\": \"bug\"})\n"
            "Same result and errors as calling server.tool(...) directly; useful when a name is not a Python "
            "identifier or is chosen at run time. `codeact tools` lists the exposed tools.")


def _resource_tool(pool: SessionPool, catalog: Catalog) -> Tool:
    def mcp_resource(server: str, uri: str) -> list[dict[str, Any]]:
        real = catalog.servers.get(server, server)
        if real not in catalog.servers.values():
            raise LookupError(_unknown(server, catalog, None))
        return pool.read_resource(real, uri)

    return Tool(
        name=RESOURCE_TOOL,
        description="Read an MCP resource (a resource_link a tool returned) as plain data.",
        parameters={"type": "object", "additionalProperties": False, "required": ["server", "uri"],
                    "properties": {"server": {"type": "string"}, "uri": {"type": "string"}}},
        returns="list[dict]", call=mcp_resource, source="mcp", in_process=True,  # as as_tool's
        doc="Read an MCP resource of a server, e.g. the uri of a {\"type\": \"resource_link\"} item a tool "
            "returned:\n    mcp_resource(server=\"docs\", uri=\"file:///guide.md\")\nReturns one dict per "
            "content: {\"uri\", \"mime_type\", \"text\"} or {\"uri\", \"mime_type\", \"blob\"} (base64).")


def _resolver(loaded: LoadedConfig, environ: Mapping[str, str], lock: Mapping[str, Any]) -> Callable[[str], Any]:
    """``name -> ServerConfig``: the configuration as it was when the run began (read now, before the program
    runs, so nothing the program writes can change which command starts), and only if it is the configuration
    the lock was made for. In a folder Copilot does not trust (``lock["trusted"]`` is False: a global or plugin
    install), the user's own servers start in the home folder, not among files the program may have written."""
    import dataclasses

    servers = loaded.servers
    unreadable = [str(p) for p in loaded.errors if not p.key]  # a syntax error: the CLI skips the whole file
    if lock.get("trusted") is False:
        from .cache import home_folder

        home = str(home_folder(environ))
        servers = {n: dataclasses.replace(c, cwd=home) if c.scope == "user" and not c.cwd else c
                   for n, c in servers.items()}
    entries: Mapping[str, Any] = lock.get("servers", {})
    checked: dict[str, Any] = {}  # name -> its config, once it passed (both sides are fixed for the run)

    def resolve(name: str) -> Any:
        config = checked.get(name)
        if config is None:  # every MCP call resolves its server: check it once, not at each call
            config = checked[name] = check(name)
        return config

    def check(name: str) -> Any:
        from .sessions import ServerUnavailable

        config, entry = servers.get(name), entries.get(name) or {}
        if config is None and unreadable:
            raise ServerUnavailable(f"MCP server {name!r} cannot start: {'; '.join(unreadable)}; fix the file (the "
                                    f"Copilot CLI skips it as well), then run {_discover_command()}")
        if config is None:
            raise ServerUnavailable(f"MCP server {name!r} has tools in the lock but is no longer configured; run "
                                    f"{_discover_command()}")
        if entry.get("config_hash") != config.config_hash() or entry.get("transport") != config.transport:
            raise ServerUnavailable(f"MCP server {name!r}: its configuration ({config.source}) changed since its "
                                    f"tools were listed; run {_discover_command()} (or the update command)")
        return config

    return resolve


__all__ = ["RunTools", "as_tool", "mcp_tools"]
