"""Assemble the tools a run offers: enabled built-ins, the user's own tools and MCP tools."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.catalog import BUILTINS, IN_PROCESS_TOOLS
from ..core.config import Settings, enabled_builtins, load_user_config
from ..core.tool import Tool, ToolContext
from ..core.toolset import ToolSet
from ..paths import copilot_home
from .specs import SPECS

if TYPE_CHECKING:
    from ..mcp.config import LoadedConfig


def builtin_tool(name: str, ctx: ToolContext) -> Tool:
    """The built-in tool ``name`` bound to ``ctx``. Its description, schema and doc come from codeact.tools.specs
    (generated from the function): its module is imported at its first call, not when a run offers it."""
    return _unbound(name)._replace(call=lambda **kw: builtin_function(name)(ctx, **kw))


@functools.cache
def _unbound(name: str) -> Tool:
    """The Tool of built-in ``name`` without a ``call``, made once per process (the warm server assembles the tools
    at every run)."""
    description, parameters, returns, doc = SPECS[name]
    return Tool(name=name, description=description, parameters=parameters, returns=returns, call=_unbound_call,
                source="builtin", doc=doc, in_process=name in IN_PROCESS_TOOLS)


def _unbound_call(**_kw: Any) -> Any:
    raise RuntimeError("a built-in tool is called through builtin_tool(), bound to a ToolContext")


@functools.cache
def builtin_function(name: str) -> Callable[..., Any]:
    """The function of built-in ``name``, taking ``(ctx, **kwargs)`` (its module is imported now)."""
    return getattr(importlib.import_module(f"{__package__}.{BUILTINS[name]}"), name)  # type: ignore[no-any-return]


# More tools of this process, asked for at every assembly: the warm server adds its live providers' here
# (codeact.server.live), so the modules of one run never import the server.
LIVE_SOURCES: list[Callable[[], Mapping[str, Tool]]] = []
# What a live provider says about itself (``codeact describe PROVIDER``), by provider name; None if not connected.
LIVE_CONTEXTS: list[Callable[[str], str | None]] = []


def assemble(ctx: ToolContext, settings: Settings, environ: Mapping[str, str] | None = None,
             *, user_config: Mapping[str, object] | None = None,
             warn: Callable[[str], None] | None = None, program: str | None = None) -> dict[str, Tool] | ToolSet:
    """Every tool offered now, by the name the program calls it. ``warn`` receives non-fatal problems.
    ``program``: the code of the run the tools are for; an install outside the repository discovers MCP servers
    not yet known only for a program that names an MCP server or tool (issue 43.5)."""
    tools = _configured(ctx, settings, environ, user_config=user_config, warn=warn, program=program)
    for source in LIVE_SOURCES:
        for name, tool in source().items():
            if name in tools or name.split(".", 1)[0] in tools:
                continue  # the hub refuses such names; a tool configured since wins
            if isinstance(tools, ToolSet):
                tools.add(tool)
            else:
                tools[name] = tool
    return tools


def _configured(ctx: ToolContext, settings: Settings, environ: Mapping[str, str] | None = None,
                *, user_config: Mapping[str, object] | None = None,
                warn: Callable[[str], None] | None = None, program: str | None = None) -> dict[str, Tool] | ToolSet:
    """The built-ins, user tools and MCP tools the configuration offers (the MCP tools of a lock are built once per
    lock and bound to the run as it uses them: :class:`~codeact.core.toolset.ToolSet`)."""
    env = os.environ if environ is None else environ
    config = load_user_config(env) if user_config is None else user_config
    tools: dict[str, Tool] = {name: builtin_tool(name, ctx) for name in enabled_builtins(settings, config, env)}
    try:
        from .user import load_user_tools
    except ImportError:  # pragma: no cover - user tools are optional in a trimmed runtime
        load_user_tools = None  # type: ignore[assignment]
    if load_user_tools is not None:
        for tool in load_user_tools(ctx, env, warn=warn):
            if tool.name in tools:
                (warn or (lambda _m: None))(f"user tool {tool.name!r} shadows the built-in of that name; skipped")
                continue
            tools[tool.name] = tool
    # The MCP configuration is read once, here, into one value that the lock (codeact.mcp.cache) and the tools
    # (codeact.mcp.bindings) both take: neither reads it again.
    mcp_config: LoadedConfig | None = None
    lock: dict[str, Any] | None
    if settings.scope != "repo":
        # an install outside the repository: this machine's lock for it, never a lock the repository ships (its
        # servers are its own commands, started only where Copilot trusts the folder: codeact.mcp.cache)
        found = _machine_lock(ctx, env, settings, warn, program)
        if found is None:
            return tools
        lock, mcp_config = found
    elif _has_servers(ctx.workspace.root / ".codeact" / "tools.lock.json") or _user_mcp_config(env):
        from ..mcp.cache import repo_lock  # the committed lock + this machine's lock of the user's own servers
        from ..mcp.config import load_servers

        # without a file of the user's own, repo_lock reads no configuration: mcp_tools reads it if it has tools
        mcp_config = load_servers(ctx.workspace.root, env) if _user_mcp_config(env) else None
        discover = program is None or mcp_config is None or names_mcp(program, mcp_config.servers)
        lock = repo_lock(ctx.workspace.root, env, exclude=settings.mcp_exclude, warn=warn, loaded=mcp_config,
                         discover=discover)
        if lock is None:
            return tools
    else:  # layout.LOCK_FILE and codeact.mcp are not imported: hot path
        return tools
    from ..mcp.bindings import RunTools, mcp_tools  # reads the lock only: no MCP server starts, no SDK is imported
    shared = mcp_tools(ctx, exclude=settings.mcp_exclude, lock=lock, warn=warn, loaded=mcp_config)
    if not isinstance(shared, RunTools):  # no MCP tools
        return tools
    offered = ToolSet(tools, shared, shared.spaces, shared.top)
    for name in tools:  # the few names of the run's own that hide MCP tools (each is said)
        hidden = [f"{name}.{member}" for member in shared.spaces.get(name, ())] + ([name] if name in shared else [])
        for mcp_name in hidden:
            (warn or (lambda _m: None))(f"MCP tool {mcp_name!r} is shadowed by the tool {name!r}; skipped")
    return offered


def names_mcp(program: str, servers: Iterable[str]) -> bool:
    """Whether ``program`` names an MCP server (as the program calls it: ``server.tool``) or an MCP tool of its own
    (``mcp_call``, ``mcp_resource``), as a word (with the ``_`` or ``_2`` a clash of names adds). A name in a string
    or a comment counts too; that costs a discovery, never a tool."""
    import re

    from ..mcp.exposure import GENERIC_TOOL, RESOURCE_TOOL, identifier

    words = [identifier(name) for name in servers] + [GENERIC_TOOL, RESOURCE_TOOL]
    return re.search(r"\b(?:" + "|".join(map(re.escape, words)) + r")_?(?:_\d+)?\b", program) is not None


def current_tools(workspace: str | None = None, environ: Mapping[str, str] | None = None,
                  cwd: str | None = None) -> dict[str, Tool] | ToolSet:
    """The tools offered now in ``workspace`` (default: the git top-level of ``cwd``, else ``cwd``), with the
    stamped settings and the user's config, as ``codeact tools``/``describe``/``search`` show them; warnings go to
    stderr. ``environ`` and ``cwd`` default to this process's (the warm server passes a request's)."""
    import sys

    from ..core.boundary import Workspace, find_workspace
    from ..core.limits import Limits

    env = os.environ if environ is None else environ
    space = Workspace.at(workspace or find_workspace(cwd), environ=env)
    user_config = load_user_config(env)
    ctx = ToolContext(workspace=space, limits=Limits.from_env(env), environ=dict(env),
                      allow_hosts=tuple(user_config.get("allow_hosts", ())))
    return assemble(ctx, Settings.load(), env, user_config=user_config,
                    warn=lambda msg: print(f"warning: {msg}", file=sys.stderr))


def _has_servers(lock_file: Path) -> bool:
    """Whether the committed lock names any MCP server (a stamp writes one with none; codeact.mcp is not imported
    for it: hot path). An unreadable lock counts as one with servers, so that codeact.mcp says what is wrong."""
    try:
        st = os.stat(lock_file)
    except OSError:
        return False
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    kept = _HAS_SERVERS.get(str(lock_file))
    if kept is not None and kept[0] == stamp:  # unchanged since the last run read it (the warm server)
        return kept[1]
    try:
        found = bool(json.loads(lock_file.read_text(encoding="utf-8")).get("servers"))
    except (OSError, ValueError, AttributeError):
        return True
    if len(_HAS_SERVERS) > 32:
        _HAS_SERVERS.clear()
    _HAS_SERVERS[str(lock_file)] = (stamp, found)
    return found


_HAS_SERVERS: dict[str, tuple[tuple[int, int, int, int], bool]] = {}  # lock file -> (its stat, has servers)


def _user_mcp_config(env: Mapping[str, str]) -> bool:
    """Whether ``$COPILOT_HOME/mcp-config.json`` exists (without importing codeact.mcp: hot path)."""
    return (copilot_home(env) / "mcp-config.json").is_file()


def _machine_lock(ctx: ToolContext, env: Mapping[str, str], settings: Settings,
                  warn: Callable[[str], None] | None,
                  program: str | None = None) -> tuple[dict[str, Any], LoadedConfig] | None:
    """The lock of a repository an install outside it works on (codeact.mcp.cache) and the MCP configuration it
    was made from; ``None`` without servers. Servers not yet known are discovered only for a ``program`` that names
    one of them or an MCP tool (any, when ``program`` is not given: ``codeact tools``)."""
    from ..mcp.cache import cached_lock, has_config
    from ..mcp.config import load_servers

    if not has_config(ctx.workspace.root, env):
        return None
    try:
        config = load_servers(ctx.workspace.root, env)
        discover = program is None or names_mcp(program, config.servers)
        lock, _path = cached_lock(ctx.workspace.root, env, exclude=settings.mcp_exclude, loaded=config,
                                  discover=discover)
    except Exception as exc:  # noqa: BLE001 - MCP trouble must not stop a program that may not need it
        (warn or (lambda _m: None))(f"MCP tools unavailable: {exc}")
        return None
    return lock, config
