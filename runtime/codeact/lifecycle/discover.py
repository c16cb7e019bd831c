"""``codeact discover``'s work, without its printing: list the configured MCP servers' tools into a lock (the
committed ``.codeact/tools.lock.json`` in repo scope, this machine's lock for a global or plugin install), or, for
``--check``, compare the configuration with that lock without starting a server."""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..mcp.cache import cache_path, cached_lock
from ..mcp.config import USER_FILE, ConfigProblem, LoadedConfig, ServerConfig, copilot_home, read_exclusions
from ..mcp.discovery import Report, active_servers, discover
from ..mcp.lock import LOCK_FILE, differences, empty_lock, parse_lock, read_lock

Progress = Callable[[str], None]


def _listed(entries: Mapping[str, Any], reason: Callable[[Mapping[str, Any]], Any]) -> dict[str, dict[str, Any]]:
    """``{server: {status, reason, tools}}`` of a lock's entries, as ``--json`` shows them."""
    return {n: {"status": e.get("status"), "reason": reason(e), "tools": [t["name"] for t in e.get("tools", [])]}
            for n, e in entries.items()}


@dataclass(frozen=True)
class UserLock:
    """Repo scope: this machine's lock of the user's own servers (``$COPILOT_HOME/mcp-config.json``), listed again;
    ``error`` says why it could not be (``path`` is then ``None``)."""

    path: Path | None
    servers: dict[str, dict[str, Any]]
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error} if self.path is None else {"lock": str(self.path), "servers": self.servers}


@dataclass(frozen=True)
class RepoDiscovery:
    """Repo scope: the committed lock's discovery, and the user's own servers' (``None`` without a file of theirs)."""

    report: Report
    user_lock: UserLock | None


@dataclass(frozen=True)
class MachineDiscovery:
    """A global or plugin install: this machine's lock for the repository, as written."""

    path: Path
    entries: dict[str, Any]

    @property
    def failed(self) -> list[str]:
        return sorted(n for n, e in self.entries.items() if e.get("status") != "ok")

    @property
    def tool_count(self) -> int:
        return sum(len(e.get("tools", [])) for e in self.entries.values())

    def to_json(self) -> dict[str, Any]:
        return {"lock": str(self.path), "servers": _listed(self.entries, lambda e: e.get("reason"))}


@dataclass(frozen=True)
class LockCheck:
    """``--check``: how the configured servers differ from the lock ``shown`` (nothing was started)."""

    shown: str
    differences: list[str]
    failed_in_lock: list[str]
    problems: list[ConfigProblem]

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "lock": self.shown, "differences": self.differences,
                "failed_in_lock": self.failed_in_lock, "problems": [str(p) for p in self.problems]}


def discover_repo(workspace: Path, *, timeout: float, environ: Mapping[str, str], progress: Progress) -> RepoDiscovery:
    """Repo scope: write the committed lock of the repository's servers. The user's own servers never go into it:
    this machine's lock of them is listed again at the same time (as runs would after RETRY_AFTER / MAX_AGE)."""
    mine: list[UserLock] = []
    refresh = threading.Thread(target=lambda: mine.append(refresh_user_lock(workspace, timeout, environ, progress)),
                               daemon=True) if (copilot_home(environ) / USER_FILE).is_file() else None
    if refresh is not None:
        refresh.start()
    report = discover(workspace, timeout=timeout, environ=environ, progress=progress)
    if refresh is not None:
        refresh.join()
    return RepoDiscovery(report, mine[0] if mine else None)


def refresh_user_lock(workspace: Path, timeout: float, environ: Mapping[str, str], progress: Progress) -> UserLock:
    """Repo scope: list the user's own servers again into this machine's lock of them (what runs read)."""
    try:
        committed = read_lock(workspace) if (workspace / LOCK_FILE).is_file() else None
        exclude = set(read_exclusions(workspace)) | set((committed or empty_lock())["servers"])
        lock, path = cached_lock(workspace, environ, exclude=exclude, timeout=timeout, force=True, progress=progress,
                                 user_only=True)
    except Exception as exc:  # noqa: BLE001 - the committed lock is written whatever happens here
        return UserLock(None, {}, str(exc))
    return UserLock(path, _listed(lock["servers"], lambda e: e.get("last_failure") or e.get("reason")))


def discover_machine_lock(workspace: Path, loaded: LoadedConfig, *, timeout: float, environ: Mapping[str, str],
                          exclude: tuple[str, ...], progress: Progress) -> MachineDiscovery:
    """A global or plugin install: list every configured server in ``loaded`` not excluded, again, into this
    machine's lock for ``workspace``."""
    lock, path = cached_lock(workspace, environ, exclude=exclude, timeout=timeout, force=True, progress=progress,
                             loaded=loaded)
    return MachineDiscovery(path, lock["servers"])


def check_machine_lock(workspace: Path, loaded: LoadedConfig, *, environ: Mapping[str, str],
                       exclude: tuple[str, ...]) -> LockCheck:
    """A global or plugin install's ``--check``: this machine's lock against the configured servers."""
    path = cache_path(workspace, environ)
    lock = parse_lock(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else None
    servers = {n: c for n, c in loaded.servers.items() if n not in exclude}
    return _check(lock, servers, loaded, str(path))


def check_repo_lock(workspace: Path, environ: Mapping[str, str]) -> LockCheck:
    """Repo scope's ``--check``: the committed lock against the repository's configured servers."""
    loaded, servers, _excluded = active_servers(workspace, environ)
    return _check(read_lock(workspace), servers, loaded, str(LOCK_FILE))


def _check(lock: Mapping[str, Any] | None, servers: Mapping[str, ServerConfig], loaded: LoadedConfig,
           shown: str) -> LockCheck:
    # a file the CLI cannot read is said as such (not as servers that vanished): the CLI starts none of its servers
    diffs = [f"{p} (the Copilot CLI skips the whole file)" for p in loaded.errors if not p.key]
    diffs += differences(lock, servers)
    failed = sorted(n for n, e in (lock or empty_lock())["servers"].items() if e.get("status") != "ok")
    return LockCheck(shown, diffs, failed, list(loaded.problems))
