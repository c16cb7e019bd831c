"""The backstop behind the bash supervisor (Linux): what a command leaves when it kills or stops its supervisor.

The supervisor (:mod:`codeact.tools.bash_reaper`) runs as the user, so the command can SIGKILL or SIGSTOP it. The
process that calls ``bash`` (the warm server, or the run itself) is therefore a child subreaper too: a process of the
command orphaned so is re-parented to it, not to init. After each call, :func:`sweep` kills and reaps the children
that appeared during the call in a session other than this process's own (the command's: the supervisor starts a new
session, a ``setsid`` child another); the helpers this process starts itself (ripgrep, the sandbox's workers) stay in
its session and are never touched.
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
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


def sweep(before: set[int]) -> None:
    """Kill and reap the children not in ``before`` that lie outside this process's session, until none is left."""
    if not _became:
        return
    own = os.getsid(0)
    until = time.monotonic() + SWEEP_S
    while time.monotonic() < until:
        strays = []
        for pid in children() - before:
            try:
                if os.getsid(pid) != own:
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
