"""The backstop behind the bash supervisor (Linux): what a command leaves when it kills or stops its supervisor.

The supervisor (:mod:`codeact.tools.bash_reaper`) runs as the user, so the command can SIGKILL or SIGSTOP it. The
process that calls ``bash`` (the warm server, or the run itself) is therefore a child subreaper too: a process of the
command orphaned so is re-parented to it, not to init. After each call, :func:`sweep` kills and reaps the children
that appeared during the call in a session other than this process's own (the command's: the supervisor starts a new
session, a ``setsid`` child another) and carry the call's mark (:data:`CALL_VARIABLE` in their environment, which
they inherit). The warm server runs several calls at once and starts MCP servers in sessions of their own: a child
without this call's mark (another call's supervisor, an MCP server) is never touched, nor are the helpers this
process starts in its own session (ripgrep, the sandbox's workers).
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
CALL_VARIABLE = "CODEACT_BASH_CALL"  # the environment variable that marks one call's processes
SWEEP_S = 5.0  # at most this long killing (a fork bomb re-parents faster than one kill a round would catch)
_became = False


def become_subreaper() -> bool:
    """Make this process a child subreaper (once); ``False`` where the platform cannot."""
    global _became
    if not _became and sys.platform.startswith("linux"):
        import ctypes

        try:
            _became = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            return False
    return _became


def children() -> set[int]:
    """This process's children, of every thread (orphans re-parented to it included)."""
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                found.update(int(pid) for pid in handle.read().split())
        except OSError:
            continue
    return found


def mark() -> str:
    """A fresh mark for one call: ``CALL_VARIABLE=<mark>`` goes into its command's environment."""
    return os.urandom(8).hex()


def sweep(before: set[int], call: str) -> None:
    """Kill and reap the children not in ``before`` that lie outside this process's session and carry the mark
    ``call``, until none is left."""
    if not _became:
        return
    own = os.getsid(0)
    token = f"{CALL_VARIABLE}={call}".encode()
    until = time.monotonic() + SWEEP_S
    while time.monotonic() < until:
        strays = []
        for pid in children() - before:
            try:
                if os.getsid(pid) != own and _marked(pid, token):
                    strays.append(pid)
            except OSError:
                continue
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _marked(pid: int, token: bytes) -> bool:
    """Whether process ``pid`` started with ``token`` in its environment."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return token in handle.read().split(b"\0")
    except OSError:
        return False
