"""The lock file ``.codeact/tools.lock.json``: what ``codeact discover`` found, and the offline drift check.

Format (version 1)::

    {
      "servers": {
        "<server name>": {
          "config_hash": "sha256:…",          # ServerConfig.config_hash(): no secret values
          "dropped": [{"name", "reason"}]?,    # tools left out (an invalid schema...); only when there are some
          "reason": null | "why it failed",    # never the server's stderr (machine noise: paths, times)
          "scope": "workspace" | "user",
          "source": ".mcp.json" | ".github/mcp.json" | "$COPILOT_HOME/mcp-config.json",
          "status": "ok" | "failed",
          "tools": [                           # sorted by name; only tools the "tools" filter lets through
            {"annotations": {…}?, "description": "…", "input_schema": {…}, "name": "…",
             "output_schema": {…} | null, "title": "…"?}
          ],
          "tools_filter": ["*"] | ["name", …],
          "transport": "stdio" | "http" | "sse"
        }
      },
      "version": 1
    }

Written with sorted keys, two-space indent, UTF-8 and a trailing newline, and no timestamps, so identical
server output gives identical bytes. Excluded servers (``mcp_exclude``) are not in the lock.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..layout import LOCK_FILE as _LOCK_FILE
from .config import ServerConfig

LOCK_VERSION = 1
LOCK_FILE = Path(_LOCK_FILE)


def lock_path(workspace: Path | str) -> Path:
    return Path(workspace) / LOCK_FILE


def dumps(lock: Mapping[str, Any]) -> str:
    """The canonical text of a lock: byte-stable for equal content."""
    return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def empty_lock() -> dict[str, Any]:
    return {"version": LOCK_VERSION, "servers": {}}


def server_entry(config: ServerConfig, *, status: str, reason: str | None = None,
                 tools: Iterable[Mapping[str, Any]] = (), dropped: Iterable[Mapping[str, str]] = ()
                 ) -> dict[str, Any]:
    """One server's lock entry (``dropped``: the tools left out and why; the key is absent when none were)."""
    left_out = sorted((dict(d) for d in dropped), key=lambda d: d["name"])
    return ({"dropped": left_out} if left_out else {}) | {
        "transport": config.transport,
        "config_hash": config.config_hash(),
        "scope": config.scope,
        "source": config.source,
        "tools_filter": list(config.tools),
        "status": status,
        "reason": reason,
        "tools": sorted((dict(t) for t in tools), key=lambda t: t["name"]),
    }


def read_lock(workspace: Path | str) -> dict[str, Any] | None:
    """The lock of ``workspace``, or ``None`` if there is none. Raises :class:`ConfigError` if it is unreadable."""
    path = lock_path(workspace)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{LOCK_FILE}: cannot read ({exc.strerror})") from None
    return parse_lock(text, str(LOCK_FILE))


_READ: dict[str, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}  # path -> (its stat when read, the lock)


def read_lock_kept(workspace: Path | str) -> dict[str, Any] | None:
    """:func:`read_lock`, parsed again only when the file changed (its inode, size, modification or change time):
    a long-lived process (the warm server) reads an unchanged lock once. The same object is returned while the
    file is unchanged, so the caller must not change it (and may key what it builds from it on its identity)."""
    path = lock_path(workspace)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return read_lock(workspace)  # says why it cannot be read
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    kept = _READ.get(str(path))
    if kept is not None and kept[0] == stamp:
        return kept[1]
    lock = read_lock(workspace)
    if lock is not None:
        if len(_READ) > 32:  # many workspaces: start over rather than grow
            _READ.clear()
        _READ[str(path)] = (stamp, lock)
    return lock


def parse_lock(text: str, shown: str = str(LOCK_FILE)) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{shown}: invalid JSON at line {exc.lineno}: {exc.msg}; run `codeact discover`") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise ConfigError(f"{shown}: not a codeact tools lock; run `codeact discover`")
    if data.get("version") != LOCK_VERSION:
        raise ConfigError(f"{shown}: lock version {data.get('version')!r} is not {LOCK_VERSION}; "
                          "run `codeact discover`")
    return data


def write_lock(workspace: Path | str, lock: Mapping[str, Any]) -> Path:
    """Write ``lock`` atomically; leaves the file untouched when the bytes would not change."""
    path = lock_path(workspace)
    text = dumps(lock)
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise ConfigError(f"cannot write {LOCK_FILE}: {exc.strerror or exc}") from None
    return path


def differences(lock: Mapping[str, Any] | None, servers: Mapping[str, ServerConfig]) -> list[str]:
    """How the configured ``servers`` (exclusions already removed) differ from ``lock``; empty when they match.

    Compares names, transports, config hashes and tools filters only: no server is started.
    """
    if lock is None:
        return [f"no lock file ({LOCK_FILE}); run `codeact discover`"] if servers else []
    locked: Mapping[str, Any] = lock.get("servers", {})
    out = []
    for name in sorted(set(servers) - set(locked)):
        out.append(f"server {name!r} is configured ({servers[name].source}) but not in the lock")
    for name in sorted(set(locked) - set(servers)):
        out.append(f"server {name!r} is in the lock but no longer configured (or now excluded)")
    for name in sorted(set(servers) & set(locked)):
        config, entry = servers[name], locked[name]
        if entry.get("transport") != config.transport:
            out.append(f"server {name!r}: transport changed from {entry.get('transport')} to {config.transport}")
        elif entry.get("config_hash") != config.config_hash():
            out.append(f"server {name!r}: configuration changed ({config.source}: command, args, url, cwd, "
                       "env or header names)")
        if list(entry.get("tools_filter", ["*"])) != list(config.tools):
            out.append(f"server {name!r}: tools filter changed from {entry.get('tools_filter')} to "
                       f"{list(config.tools)}")
    return out


__all__ = ["LOCK_FILE", "LOCK_VERSION", "differences", "dumps", "empty_lock", "lock_path", "parse_lock",
           "read_lock", "read_lock_kept", "server_entry", "write_lock"]
