"""A workspace's warm server seen from outside, for ``codeact server status|start|stop``: its socket, the
configuration hash a run would need, what it answers, and a stuck one found by its lock file."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import client

if TYPE_CHECKING:
    from ..frames import Reply, Request, Status

STATUS_KEYS = ("running", "pid", "socket", "workspace", "config_hash", "started_at", "idle_timeout_s", "mcp_sessions",
               "providers", "active_runs", "responding", "stuck")
STUCK = "the server does not answer: a run holds its interpreter (a tool stuck in C code)"
STOP_WAIT_S = 10  # how long `stop` waits for the server's process to end


class Target:
    """The server of ``workspace`` (default: the git top-level of the current folder, else it): its socket, and
    the configuration hash a run would need."""

    def __init__(self, workspace: str | None) -> None:
        self.environ = dict(os.environ)
        self.workspace = client.workspace_of(workspace, os.getcwd())
        self.folder = client.server_folder(self.environ)
        self.socket = client.socket_path(self.folder, self.workspace)

    def ask(self, message: Request, answer: str) -> Reply | None:
        """The server's ``answer`` (a kind of :data:`codeact.frames.REPLIES`) to ``message`` (None: none answers)."""
        try:
            client.private_folder(self.folder, create=False)
        except client.Unreachable:
            return None
        return client.request(self.socket, message, (answer,))

    def silent_pid(self) -> int:
        """The pid of a server that holds this socket but did not answer (0: none runs): the pid its lock file
        names, when that process still runs the server of this socket."""
        from ..processes import process_running

        try:
            with open(self.socket[:-len(".sock")] + ".lock", encoding="ascii") as handle:
                pid = int(handle.read().strip() or 0)
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                serves = os.fsencode(self.socket) in handle.read().split(b"\0")
        except (OSError, ValueError):
            return 0
        return pid if serves and process_running(pid) else 0

    def current_hash(self) -> str:
        from .confighash import config_hash

        return config_hash(Path(self.workspace), self.environ)


def status(target: Target) -> dict[str, Any]:
    """The ``server status --json`` object: ``running`` only when the server serves the current configuration;
    ``responding`` false and ``stuck`` saying why when a server holds the socket but does not answer."""
    reply = target.ask({"op": "status"}, "running")
    status: Status | None = reply if reply is not None and "running" in reply else None
    shown: dict[str, Any] = {key: None for key in STATUS_KEYS}
    if status is not None:
        shown.update(status)
    shown.update(running=status is not None and status["config_hash"] == target.current_hash(),
                 socket=target.socket, workspace=status["workspace"] if status else target.workspace,
                 mcp_sessions=status["mcp_sessions"] if status else [], responding=status is not None,
                 stuck=status["stuck"] if status else [])
    if status is None:
        from .daemon import idle_timeout

        shown["idle_timeout_s"] = idle_timeout(target.environ)
        silent = target.silent_pid()
        if silent:
            shown.update(pid=silent, stuck=[STUCK])
    return shown


def start(target: Target) -> None:
    """Start a server for the target; raises :class:`codeact.client.Unreachable` when none starts."""
    client.private_folder(target.folder)
    client.start_server(target.socket, target.workspace, target.environ)


def stop(target: Target) -> int | None:
    """Stop the target's server (kill a stuck one) and wait for its process to end: its pid (0: unknown), or
    None when none ran."""
    from ..processes import process_running

    reply = target.ask({"op": "stop"}, "stopping")
    if reply is not None and "stopping" in reply:
        pid = reply["pid"]
    elif target.silent_pid():  # stuck: it cannot hear a stop
        pid = target.silent_pid()
        try:
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    else:
        return None
    until = time.monotonic() + STOP_WAIT_S
    while pid and time.monotonic() < until and process_running(pid):
        time.sleep(0.02)
    return pid


__all__ = ["STATUS_KEYS", "STUCK", "Target", "start", "status", "stop"]
