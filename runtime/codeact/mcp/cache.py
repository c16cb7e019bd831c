"""MCP tools for an install that does not live in the repository it works on (global and plugin scope).

A repo-scope install commits ``.codeact/tools.lock.json``, written by ``codeact refresh`` when the template is copied
or updated. A global or plugin install serves every repository, so it keeps a machine-local lock per repository
instead, under ``${XDG_CACHE_HOME:-~/.cache}/codeact/mcp/``: the first run in a repository discovers the servers
configured for it (the repository's ``.mcp.json`` and ``.github/mcp.json``, and the user's
``$COPILOT_HOME/mcp-config.json``) in parallel, and later runs reuse the result. A server is discovered again when
its configuration changes (its config hash, transport or tools filter), when it was listed more than ``MAX_AGE``
ago (a day; a server started from ``@latest`` may have changed) or failed more than ``RETRY_AFTER`` ago (10
minutes), or on ``codeact discover``.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import ConfigError
from ..probe import cache_dir
from .config import ServerConfig, config_files, load_servers
from .lock import dumps, empty_lock, parse_lock, server_entry

RETRY_AFTER = 600.0  # seconds before a failed server is tried again by a run
MAX_AGE = 86400.0  # seconds before a working server is listed again (servers started from `@latest` change)


def cache_path(workspace: Path, environ: Mapping[str, str]) -> Path:
    """The machine-local lock of one repository."""
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    return cache_dir(environ) / "mcp" / f"{workspace.name or 'root'}-{key}.lock.json"


def has_config(workspace: Path, environ: Mapping[str, str]) -> bool:
    """Whether any MCP configuration file exists for ``workspace`` (a few ``stat`` calls)."""
    return any(path.is_file() for path, _shown, _scope in config_files(workspace, environ))


def cached_lock(workspace: Path, environ: Mapping[str, str], *, timeout: float = 10.0, force: bool = False,
                progress: Callable[[str], None] | None = None) -> tuple[dict[str, Any], Path]:
    """The lock of every server configured for ``workspace``, discovering those not known (or all, ``force``).

    Never raises for a failing server (it is recorded as failed, with the reason); raises :class:`ConfigError`
    only when the cache cannot be written.
    """
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    path = cache_path(workspace, environ)
    servers = load_servers(workspace, environ).servers
    known = {} if force else _read(path)
    now = time.time()
    lock = empty_lock()
    stale: dict[str, ServerConfig] = {}
    for name, config in servers.items():
        entry = known.get(name)
        if entry is not None and _fresh(entry, config, now):
            lock["servers"][name] = entry
        else:
            stale[name] = config
    if stale:
        from .discovery import _line, discover_servers

        say(f"codeact: discovering {len(stale)} MCP server(s) for {workspace.name or workspace} "
            f"(kept in {path} until their configuration changes): {', '.join(stale)}")
        outcomes = asyncio.run(discover_servers(stale, timeout=timeout, cwd=workspace,
                                                on_outcome=lambda o: say(f"codeact: {_line(o)}")))
        for name, outcome in outcomes.items():
            entry = server_entry(stale[name], status=outcome.status, reason=outcome.reason, tools=outcome.tools)
            lock["servers"][name] = {**entry, "checked_at": int(now)}
        lock["servers"] = dict(sorted(lock["servers"].items()))
        _write(path, lock)
    elif len(known) != len(servers):  # a server was removed from the configuration
        _write(path, lock)
    return lock, path


def _fresh(entry: Mapping[str, Any], config: ServerConfig, now: float) -> bool:
    if (entry.get("config_hash"), entry.get("transport"), list(entry.get("tools_filter") or ["*"])) != \
            (config.config_hash(), config.transport, list(config.tools)):
        return False
    age = now - float(entry.get("checked_at") or 0)
    return age < (MAX_AGE if entry.get("status") == "ok" else RETRY_AFTER)


def _read(path: Path) -> dict[str, Any]:
    try:
        return parse_lock(path.read_text(encoding="utf-8"), str(path))["servers"]
    except (OSError, ConfigError):
        return {}  # missing or damaged: discover again


def _write(path: Path, lock: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(dumps(lock), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise ConfigError(f"cannot write the MCP tools cache {path}: {exc.strerror or exc}; make it writable or "
                          "point XDG_CACHE_HOME at a writable folder") from None
