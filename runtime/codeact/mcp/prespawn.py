"""Local servers started as discovery begins, before anything else, and every server process of a discovery
stopped when it ends.

Started first, the configured stdio servers start on the other cores while discovery gets ready to list them.
Discovery's own client (:mod:`codeact.mcp.plain_listing`) takes each one over (:func:`take`); a server it leaves to
the SDK is started again by the SDK's stdio transport, or taken over where it was not spoken to yet:
:func:`handed_over` stands in for the SDK's process start and returns the waiting process when the command,
arguments, environment, folder and stderr file are exactly those it was started with (anything else starts a
process as the SDK would). Every process a discovery's clients were given is recorded, and :func:`stop_all` ends
what still runs when the discovery ends (a server that closed its stdout and lives on, one no client took over, a
discovery cut short). POSIX only (on Windows the SDK starts servers in a job object of its own).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from . import npm_outside
from .config import ServerConfig

SUPPORTED = sys.platform != "win32"
# What the SDK's stdio transport adds from this process's environment on POSIX, under the server's own
# (``mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS``; a test keeps the two the same).
SDK_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


@dataclass
class Started:
    """A server process started ahead of its session, and what it was started with."""

    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None
    errlog: TextIO
    process: Any  # anyio.abc.Process


@dataclass
class _Discovery:
    """One discovery's server processes: those started ahead and not taken over yet, and every one its sessions
    were given (``anyio.abc.Process``)."""

    waiting: list[Started]
    given: list[Any]


# Every discovery's live server processes, by pid (each leads a group of its own): what a process stops when it is
# told to end while discoveries run in its threads (the warm server on SIGTERM), where no ``finally`` runs.
_LIVE: dict[int, Any] = {}
_LIVE_LOCK = threading.Lock()

# A context variable: the warm server may discover in several threads at once, and each discovery's tasks see
# only its own (a run's sessions, outside any discovery, see none).
_current: contextvars.ContextVar[_Discovery | None] = contextvars.ContextVar("codeact_discovery", default=None)


def stdio_params(config: ServerConfig, cwd: Path | None, environ: Mapping[str, str] | None
                 ) -> tuple[str, list[str], dict[str, str], str | None]:
    """The command, arguments, environment and folder :func:`codeact.mcp.sessions.open_session` gives the SDK.

    The user's own server (``$COPILOT_HOME/mcp-config.json``) starts in the workspace (as the CLI starts it) but
    takes no code from the files a program may write there: it runs with ``PYTHONSAFEPATH=1`` unless its entry sets
    that variable (``python -m server`` would import a ``json.py`` first; Python 3.11+ honours it), and npm takes
    its packages and settings from an empty folder (:mod:`codeact.mcp.npm_outside`). A repository's own server keeps the
    folder on its path and its packages, as the CLI runs it."""
    inherited = dict(os.environ if environ is None else environ)
    folder = config.cwd or cwd
    env = {**inherited, **config.env}
    args = list(config.args)
    if config.scope == "user":
        if "PYTHONSAFEPATH" not in config.env:
            env["PYTHONSAFEPATH"] = "1"
        args = npm_outside.outside(config.command or "", args, env)
    return config.command or "", args, env, None if folder is None else str(folder)


async def start(servers: Mapping[str, ServerConfig], errlogs: Mapping[str, TextIO], cwd: Path | None,
                environ: Mapping[str, str] | None) -> None:
    """Start each stdio server of ``servers`` that has an ``errlog``, for this discovery's sessions to take over.

    A server that cannot be started here is left to the SDK, which reports why when it tries."""
    if not SUPPORTED:
        return
    discovery = _Discovery([], [])
    _current.set(discovery)  # first: a discovery ended while it starts them still stops those started
    for name, config in servers.items():
        errlog = errlogs.get(name)
        if config.transport != "stdio" or errlog is None:
            continue
        started = await _open(config, errlog, cwd, environ)
        if started is not None:
            discovery.waiting.append(started)


async def _open(config: ServerConfig, errlog: TextIO, cwd: Path | None, environ: Mapping[str, str] | None
                ) -> Started | None:
    """Start ``config``'s server as the SDK would (None where it cannot be started here: the SDK says why)."""
    import anyio

    command, args, env, folder = stdio_params(config, cwd, environ)
    env = {**_sdk_defaults(), **env}  # exactly the environment the SDK would start it with
    try:
        process = await anyio.open_process([command, *args], env=env, stderr=errlog, cwd=folder,
                                           start_new_session=True)  # as the SDK starts it: its own group
    except (OSError, ValueError):
        return None
    _track(process)
    return Started(command, args, env, folder, errlog, process)


async def take(config: ServerConfig, errlog: TextIO, cwd: Path | None, environ: Mapping[str, str] | None
               ) -> Any | None:
    """The process of ``config``'s server for this discovery's own client (:mod:`codeact.mcp.plain_listing`): the
    one started ahead for ``errlog``, or one started now; ``None`` where none can be started here."""
    discovery = _current.get()
    if discovery is None or not SUPPORTED:
        return None
    mine = next((s for s in discovery.waiting if s.errlog is errlog), None)
    if mine is not None:
        discovery.waiting.remove(mine)
    else:
        mine = await _open(config, errlog, cwd, environ)
        if mine is None:
            return None
    discovery.given.append(mine.process)
    return mine.process


def _sdk_defaults() -> dict[str, str]:
    """``mcp.client.stdio.get_default_environment()``, without importing the SDK."""
    return {k: v for k in SDK_INHERITED if (v := os.environ.get(k)) is not None and not v.startswith("()")}


def install() -> None:
    """Put :func:`handed_over` in the place of the SDK's process start (once a process; imports the SDK)."""
    from mcp.client import stdio

    original = stdio._create_platform_compatible_process
    if getattr(original, "codeact_handover", False):
        return

    async def handed_over(command: str, args: list[str], env: dict[str, str] | None = None,
                          errlog: TextIO = sys.stderr, cwd: Path | str | None = None) -> Any:
        discovery = _current.get()
        if discovery is None:  # a run's session: the SDK's own start
            return await original(command=command, args=args, env=env, errlog=errlog, cwd=cwd)
        mine = next((s for s in discovery.waiting if s.errlog is errlog), None)  # a stderr file each server
        process = None
        if mine is not None:
            discovery.waiting.remove(mine)
            if (mine.command, mine.args, mine.env, mine.cwd) == (command, list(args), env,
                                                                 None if cwd is None else str(cwd)):
                process = mine.process
            else:
                await _stop(mine.process)  # started otherwise: stopped before the SDK starts it (it may hold a file)
        if process is None:
            process = await original(command=command, args=args, env=env, errlog=errlog, cwd=cwd)
        _track(process)
        discovery.given.append(process)
        return process

    handed_over.codeact_handover = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = handed_over


def still_waiting() -> int:
    """How many of this discovery's started servers no session has taken over yet."""
    discovery = _current.get()
    return len(discovery.waiting) if discovery else 0


async def stop_all() -> None:
    """Stop this discovery's server processes that still run: those no session took over (their discovery ended
    first: out of time, cancelled, terminated) and those the SDK's shutdown left running."""
    discovery = _current.get()
    _current.set(None)
    if discovery is None:
        return
    for process in [s.process for s in discovery.waiting] + discovery.given:
        await _stop(process)  # its group too: a wrapper's server lives on after its first process ended


def stop_every_discovery() -> None:
    """Kill the server processes (and their groups) of every discovery still running in this process, from any
    thread: for a process that ends while discoveries run in its other threads (their ``finally`` never runs)."""
    with _LIVE_LOCK:
        pids = list(_LIVE)
        _LIVE.clear()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _track(process: Any) -> None:
    with _LIVE_LOCK:
        _LIVE[process.pid] = process


async def _stop(process: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # its own process group, as the SDK's tree kill
    with contextlib.suppress(Exception):
        await process.wait()
    with _LIVE_LOCK:
        if _LIVE.get(process.pid) is process:
            del _LIVE[process.pid]
    with contextlib.suppress(Exception):
        await process.aclose()


__all__ = ["SDK_INHERITED", "SUPPORTED", "Started", "install", "start", "stdio_params", "still_waiting", "stop_all",
           "stop_every_discovery", "take"]
