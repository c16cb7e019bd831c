"""The bash tool's supervisor (Linux): every process a command started ends with the call, ``setsid`` ones too.

Run as ``python -S -I bash_reaper.py COMMAND`` (no ``codeact`` import: it starts in a few milliseconds). It makes
itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): a process of the command whose parent ends (a
``setsid`` child, a double fork, a daemon) is re-parented to it, not to init, whatever its session, process group or
environment. It runs ``bash -c COMMAND`` in its own process group and waits for it; then, after a short grace for
background writers, or at once on SIGTERM (the call's timeout or the run's deadline), it kills every child it has
until none is left (each killed child's own children come back to it), and exits as bash did (a signal as a shell
reports it: 128 + N). Where it is the init of a PID namespace of its own (codeact.tools.bash_namespace), the command
cannot signal it from inside, and the kernel kills whatever is left in the namespace once it exits.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import os
import signal
import sys
import time

GRACE_S = 0.5  # background children may keep writing this long after bash exits, or take this long to stop
SWEEP_S = 5.0  # at most this long killing (a fork bomb re-parents faster than one kill a round would catch)
PR_SET_CHILD_SUBREAPER = 36
ENDED: "dict[int, int]" = {}  # pid -> wait status of each child reaped
INIT = os.getpid() == 1  # the init of a PID namespace of its own (codeact.tools.bash_namespace)


class Stop(Exception):
    """SIGTERM: the call's timeout or the run's deadline."""


def _stop(*_: object) -> None:
    raise Stop


def _children() -> "list[int]":
    """This process's children (its own and those re-parented to it)."""
    try:
        with open(f"/proc/self/task/{os.getpid()}/children", encoding="ascii") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:  # no CONFIG_PROC_CHILDREN: every process's parent, read from /proc
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", "rb") as handle:
                        if int(handle.read().rsplit(b")", 1)[1].split()[1]) == os.getpid():
                            found.append(int(name))
                except (OSError, IndexError, ValueError):
                    continue
        return found


def _reap() -> None:
    """Collect every child that has ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ENDED[pid] = status


def _none_left() -> bool:
    """Reap what ended; whether no child is left. Waits only, never reads /proc: in a PID namespace of its own the
    command may mount over /proc (as root), and every process there is this process's descendant."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False
        ENDED[pid] = status


def _sweep_namespace(first: int) -> None:
    """As the namespace's init: ``first`` to every process in it, a grace when that is SIGTERM, then SIGKILL; the
    kernel kills whatever is left once this process exits."""
    for sig in (first, signal.SIGKILL) if first != signal.SIGKILL else (first,):
        try:
            os.kill(-1, sig)  # every process of the namespace but its init
        except OSError:
            pass
        until = time.monotonic() + (GRACE_S if sig != signal.SIGKILL else 0.05)
        while not _none_left() and time.monotonic() < until:
            time.sleep(0.01)


def _sweep(first: int) -> None:
    """``first`` to every child, then SIGKILL to each until none is left."""
    for pid in _children():
        try:
            os.kill(pid, first)
        except OSError:
            pass
    if first != signal.SIGKILL:
        until = time.monotonic() + GRACE_S
        while time.monotonic() < until and _children():
            _reap()
            time.sleep(0.01)
    until = time.monotonic() + SWEEP_S
    while time.monotonic() < until:
        _reap()
        left = _children()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.001)


def main() -> None:
    import ctypes

    signal.signal(signal.SIGTERM, _stop)
    stopping, bash = False, -1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        bash = os.fork()
        if bash == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.execvp("bash", ["bash", "-c", sys.argv[1]])
            finally:
                os._exit(127)
        while bash not in ENDED:
            pid, status = os.waitpid(-1, 0)  # any child: the re-parented ones are reaped as they end
            ENDED[pid] = status
        until = time.monotonic() + GRACE_S  # a background writer may finish its output, as before
        while time.monotonic() < until and (not _none_left() if INIT else _children()):
            _reap()
            time.sleep(0.01)
    except Stop:
        stopping = True
    except ChildProcessError:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # from here on nothing interrupts the sweep
    (_sweep_namespace if INIT else _sweep)(signal.SIGTERM if stopping else signal.SIGKILL)
    status = ENDED.get(bash, 0)
    if os.WIFSIGNALED(status):  # as a shell reports it (tools/shell.py reads a signal so): a namespace's init
        sys.exit(128 + os.WTERMSIG(status))  # cannot raise a signal on itself, so one way for both
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
