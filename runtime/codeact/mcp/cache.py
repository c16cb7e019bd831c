"""MCP tools for an install that does not live in the repository it works on (global and plugin scope).

A repo-scope install commits ``.codeact/tools.lock.json``, written by ``codeact refresh`` when the template is copied
or updated. A global or plugin install serves every repository, so it keeps a machine-local lock per repository
instead, under ``${XDG_CACHE_HOME:-~/.cache}/codeact/mcp/``: the first run in a repository discovers the servers
configured for it (the repository's ``.mcp.json`` and ``.github/mcp.json``, and the user's
``$COPILOT_HOME/mcp-config.json``) in parallel, and later runs reuse the result. A server is discovered again when
its configuration changes (command, arguments, environment, headers, transport or tools filter), when it was listed
more than ``MAX_AGE`` ago (a day; a server started from ``@latest`` may have changed) or failed more than
``RETRY_AFTER`` ago (10 minutes), or on ``codeact discover`` (in repo scope too, for the user's own servers, whose
tools a repo-scope install keeps in a machine-local lock of their own). A server that fails where it worked before,
its configuration unchanged, keeps its last known tools (callable again once it is back), marked with the failure
(``failed_at``, ``last_failure``) and tried again after ``RETRY_AFTER``.

The repository's own servers are commands from the repository: a run starts them only where the Copilot CLI would
(a folder it trusts); ``codeact discover`` starts them on request.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..paths import codeact_cache_dir, copilot_home, home
from .config import USER_FILE, LoadedConfig, ServerConfig, config_files, load_servers
from .lock import dumps, empty_lock, lock_path, parse_lock, read_lock_kept, server_entry

RETRY_AFTER = 600.0  # seconds before a failed server is tried again by a run
MAX_AGE = 86400.0  # seconds before a working server is listed again (servers started from `@latest` change)


def home_folder(environ: Mapping[str, str]) -> Path:
    """Where the user's own servers start when the folder is not trusted: not beside the repository's .npmrc, .env
    or Python modules (``python -m server`` imports from its working folder first), which a program may write."""
    return home(environ)


def cache_path(workspace: Path, environ: Mapping[str, str], *, user_only: bool = False) -> Path:
    """The machine-local lock of one repository (``user_only``: of the user's own servers, for repo scope)."""
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    return codeact_cache_dir(environ) / "mcp" / f"{workspace.name or 'root'}-{key}{'.user' if user_only else ''}.lock.json"


def has_config(workspace: Path, environ: Mapping[str, str]) -> bool:
    """Whether any MCP configuration file exists for ``workspace`` (a few ``stat`` calls)."""
    return any(path.is_file() for path, _shown, _scope in config_files(workspace, environ))


def copilot_trusts(folder: Path, environ: Mapping[str, str]) -> bool:
    """Whether the Copilot CLI starts ``folder``'s own MCP servers without asking: the folder (or one above it) is
    among its trusted folders (``trustedFolders`` or ``trusted_folders`` in ``$COPILOT_HOME/config.json``, which
    the CLI writes when you trust a folder for future sessions, or ``settings.json``), or ``COPILOT_ALLOW_ALL=true``."""
    if environ.get("COPILOT_ALLOW_ALL") == "true":
        return True
    here = folder.resolve()
    for name in ("config.json", "settings.json"):
        for entry in _trusted_folders(copilot_home(environ) / name):
            trusted = Path(entry).expanduser().resolve()
            if here == trusted or trusted in here.parents:
                return True
    return False


def _trusted_folders(path: Path) -> list[str]:
    try:  # the CLI writes `//` comment lines above the JSON
        text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith("//"))
        data = json.loads(text)
    except (OSError, ValueError):
        return []
    listed = (data.get("trustedFolders") or data.get("trusted_folders")) if isinstance(data, dict) else None
    return [e for e in listed if isinstance(e, str) and e] if isinstance(listed, list) else []


def cached_lock(workspace: Path, environ: Mapping[str, str], *, exclude: Iterable[str] = (),
                timeout: float | None = None, force: bool = False, progress: Callable[[str], None] | None = None,
                user_only: bool = False, loaded: LoadedConfig | None = None,
                discover: bool = True) -> tuple[dict[str, Any], Path]:
    """The lock of every server configured for ``workspace`` and not excluded, discovering those not known.

    ``force`` (``codeact discover``) lists every server again. Otherwise the repository's own servers are started
    only where Copilot trusts the folder (:func:`copilot_trusts`): elsewhere an entry that ``codeact discover`` made
    for the same configuration is kept, however old, and a new or changed server is left out with a note.
    Never raises for a failing server (it is recorded as failed, with the reason); raises :class:`ConfigError` only
    when the cache cannot be written. ``user_only`` (repo scope, whose committed lock holds the repository's own
    servers): only the user's servers, in a cache file of their own. ``timeout``: for servers that set none. ``loaded``: the configuration
    already read for this run (:func:`~codeact.mcp.config.load_servers`), read here when not given. ``discover``
    false (a program that names no MCP server): the servers known already, nothing started, said or written.
    """
    path = cache_path(workspace, environ, user_only=user_only)
    log: list[str] = []  # a run's discovery: its lines go to a log file, one short line to stderr (_summary)
    say = progress or log.append
    skip = set(exclude)
    loaded = load_servers(workspace, environ) if loaded is None else loaded
    servers = {n: c for n, c in loaded.servers.items()
               if n not in skip and (c.scope == "user" or not user_only)}
    known = _read(path)
    now = time.time()
    trusted = force or copilot_trusts(workspace, environ)
    lock = empty_lock()
    stale: dict[str, ServerConfig] = {}
    held_back: list[str] = []
    for name, config in servers.items():
        entry = known.get(name)
        asks_consent = config.scope == "workspace" and not trusted
        if not force and entry is not None and _same_config(entry, config) and (asks_consent or _recent(entry, now)):
            lock["servers"][name] = entry
        elif asks_consent:
            held_back.append(name)
        else:
            stale[name] = config
    if not discover:
        lock["trusted"] = trusted
        return lock, path
    if held_back:
        say(f"codeact: not starting this repository's MCP server(s) {', '.join(held_back)}: Copilot does not trust "
            f"{workspace} (its trusted folders, or COPILOT_ALLOW_ALL=true); `codeact discover` lists them on request")
    if stale:
        say(f"codeact: discovering {len(stale)} MCP server(s) for {workspace.name or workspace} "
            f"(kept in {path} until their configuration changes): {', '.join(stale)}")
        cwd = workspace if trusted else home_folder(environ)
        for name, outcome in _discover(stale, timeout, cwd, environ, say).items():
            before = known.get(name)
            if outcome.status != "ok" and before is not None and before.get("status") == "ok" \
                    and _same_config(before, stale[name]):
                # briefly down (or a slow start on a busy machine): its last known tools stay, marked
                lock["servers"][name] = {**before, "failed_at": int(now), "last_failure": outcome.reason}
                say(f"codeact: kept the {len(before.get('tools') or [])} tool(s) last listed for {name}")
                continue
            entry = server_entry(stale[name], status=outcome.status, reason=outcome.reason, tools=outcome.tools,
                                 dropped=outcome.dropped)
            lock["servers"][name] = {**entry, "values_hash": _values_hash(stale[name]), "checked_at": int(now)}
        lock["servers"] = dict(sorted(lock["servers"].items()))
    if stale or set(known) != set(lock["servers"]):
        _write(path, lock)
    if log:
        print(_summary(log, path, {n: lock["servers"].get(n) for n in stale}, held_back), file=sys.stderr,
              flush=True)
    lock["trusted"] = trusted  # not written: how this run may start the servers (codeact.mcp.bindings)
    return lock, path


def repo_lock(workspace: Path, environ: Mapping[str, str], *, exclude: Iterable[str] = (),
              warn: Callable[[str], None] | None = None, loaded: LoadedConfig | None = None,
              discover: bool = True) -> dict[str, Any] | None:
    """Repo scope: the committed lock, plus this machine's lock of the user's own servers
    (``$COPILOT_HOME/mcp-config.json``), which the committed lock never holds; ``None`` when there is neither.

    The user's servers are callable as in global scope (discovered once, kept in the cache); they never reach the
    committed lock, instructions or agent, only ``codeact tools``. A few ``stat`` calls when there are none.
    ``loaded`` and ``discover``: as :func:`cached_lock`'s.
    """
    note = warn or (lambda _m: None)
    committed: dict[str, Any] | None = None
    if lock_path(workspace).is_file():
        try:
            committed = read_lock_kept(workspace)  # kept while unchanged: mcp_tools keys its tools on it
        except ConfigError as exc:
            note(f"MCP tools unavailable: {exc}")
    if not (copilot_home(environ) / USER_FILE).is_file():
        return committed
    taken = set((committed or {}).get("servers", {}))
    try:
        mine, _path = cached_lock(workspace, environ, exclude=set(exclude) | taken, user_only=True, loaded=loaded,
                                  discover=discover)
    except Exception as exc:  # noqa: BLE001 - the user's servers must not stop a program that may not need them
        note(f"your MCP servers ($COPILOT_HOME/{USER_FILE}) are unavailable: {exc}")
        return committed
    if not mine["servers"]:
        return committed
    merged = dict(committed or empty_lock())
    merged["servers"] = dict(sorted({**mine["servers"], **merged["servers"]}.items()))
    merged["trusted"] = mine["trusted"]
    return merged


def _discover(servers: Mapping[str, ServerConfig], timeout: float | None, cwd: Path, environ: Mapping[str, str],
              say: Callable[[str], None]) -> dict[str, Any]:
    from .discovery import DEFAULT_TIMEOUT, discover_servers, outcome_line, run_stopping_servers
    from .sessions import in_helper_thread, loop_running_here

    def go() -> dict[str, Any]:
        return run_stopping_servers(discover_servers(servers, timeout=timeout or DEFAULT_TIMEOUT, cwd=cwd,
                                                     environ=environ,
                                                     on_outcome=lambda o: say(f"codeact: {outcome_line(o)}"),
                                                     progress=lambda line: say(f"codeact: {line.strip()}")))

    return in_helper_thread(go) if loop_running_here() else go()  # a caller already inside an event loop


def discovery_log(lock: Path) -> Path:
    """Where a run's discovery for the machine-local lock ``lock`` writes its lines (beside it)."""
    return lock.with_name(lock.name.removesuffix(".lock.json") + ".discover.log")


def _summary(lines: list[str], lock: Path, found: Mapping[str, Any], held_back: list[str]) -> str:
    """The one short line a run prints about a discovery it made: counts, and the log file holding the rest."""
    log = discovery_log(lock)
    try:
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError:
        log = lock  # the lock's folder is written just before; if not, the line still says what happened
    ok = [e for e in found.values() if e and e.get("status") == "ok" and e.get("failed_at") is None]
    tools = sum(len(e.get("tools") or []) for e in ok)
    parts = [f"MCP servers discovered for this repository: {len(ok)} of {len(found)} ok, {tools} tool(s)"] \
        if found else []
    if held_back:
        parts.append(f"{len(held_back)} not started (Copilot does not trust the folder)")
    return f"codeact: {'; '.join(parts)} (details: {log})"


def _same_config(entry: Mapping[str, Any], config: ServerConfig) -> bool:
    """Whether ``entry`` was listed for this very configuration (values included: this lock stays on the machine,
    and only their hash is kept)."""
    return (entry.get("config_hash"), entry.get("transport"), list(entry.get("tools_filter") or ["*"]),
            entry.get("values_hash")) == (config.config_hash(), config.transport, list(config.tools),
                                          _values_hash(config))


def _recent(entry: Mapping[str, Any], now: float) -> bool:
    if entry.get("failed_at") is not None:  # last known tools kept through a failure: try again after RETRY_AFTER
        return now - float(entry["failed_at"]) < RETRY_AFTER
    age = now - float(entry.get("checked_at") or 0)
    return age < (MAX_AGE if entry.get("status") == "ok" else RETRY_AFTER)


def _values_hash(config: ServerConfig) -> str:
    material = [config.command, list(config.args), config.cwd, config.url, sorted(config.env.items()),
                sorted((k.lower(), v) for k, v in config.headers.items())]
    return hashlib.sha256(json.dumps(material, default=str).encode()).hexdigest()[:16]


def _read(path: Path) -> dict[str, Any]:
    try:
        servers: dict[str, Any] = parse_lock(path.read_text(encoding="utf-8"), str(path))["servers"]
        return servers
    except (OSError, ConfigError):
        return {}  # missing or damaged: discover again


def _write(path: Path, lock: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_text(dumps(lock), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise ConfigError(f"cannot write the MCP tools cache {path}: {exc.strerror or exc}; make it writable or "
                          "point XDG_CACHE_HOME at a writable folder") from None
