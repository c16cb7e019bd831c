"""Red team, round 6 (a helper that had not seen the change): the bash tool's PID namespace attacked through the
stamped launcher. Each test is one attempt that broke through before its fix."""
from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.runtime.launchers import Launcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PID namespaces, /proc: Linux")


@pytest.fixture
def bash_launcher(make_launcher: Callable[..., Launcher]) -> Launcher:
    """A stamped repository with ``bash`` (exclusive mode) and its launcher; each run's ``--timeout`` is 60 s."""
    return make_launcher(["view", "create", "edit", "glob", "grep", "outline", "bash", "sql"], limit=60)


def _processes_named(name: str, anywhere: bool = False) -> list[int]:
    """The pids whose command line starts with ``name`` (what ``exec -a NAME`` gives), or holds it anywhere."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0] == name.encode() or (anywhere and any(name.encode() in a for a in argv)):
                found.append(int(entry.name))
    return found


# ------------------------------------------------------- bash: a run started through the warm server from inside
@pytest.mark.slow
def test_a_bash_command_cannot_leave_a_run_going_in_the_warm_server_after_its_own_run(
        bash_launcher: Launcher) -> None:
    """The command runs the repository's own launcher in the background: its thin client reaches the warm server
    (outside the call's PID namespace), which starts a second run with ``--timeout 600``. The client dies with the
    namespace, but the server never notices its client went away: the second run's ``bash`` (here a ``sleep``) kept
    running long after the first run had ended (seen for 20 s and more; it could start the next one the same way)."""
    mark = f"rt6inner{os.getpid()}"
    inner = f"bash(command='exec -a {mark} sleep 120')"
    outer = ("print(bash(command=\".codeact/bin/codeact run --timeout 600 --code \\\"" + inner + "\\\" "
             ">/dev/null 2>&1 & sleep 3; echo started\"))")
    try:
        done = bash_launcher.run("bash(command='true')")  # the warm server is up, as in any session after one run
        assert done.returncode == 0, done.stderr
        done = bash_launcher.run(outer)
        assert done.returncode == 0 and "started" in done.stdout, (done.stdout, done.stderr)
        time.sleep(3)
        left = _processes_named(mark)
        assert not left, f"a process of the command still runs after its run ended: {left}"
    finally:
        for pid in _processes_named(mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


# ----------------------------------------- bash as root: a supervisor that never ends outlives the run's deadline
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting over the namespace's /proc needs root (no user namespace)")
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_bash_command_cannot_keep_its_namespace_alive_past_the_runs_deadline(bash_launcher: Launcher,
                                                                              warm: bool) -> None:
    """As root the command may mount in its namespace: a tmpfs over /proc with a FIFO at
    ``/proc/self/task/1/children`` makes the supervisor's every look for its children (bash_reaper._children) block
    for ever, SIGTERM included (it ignores SIGTERM while it sweeps). At the run's deadline the warm server abandons
    the run and exits (cold: faulthandler ends the process in shell._stop_supervised's wait, with a host
    traceback) before shell._stop_group's SIGKILL to the group: the namespace's init never exits, so the command's
    background ``sleep`` (and unshare, and the supervisor) ran on, re-parented to pid 1, for good."""
    mark = f"rt6fifo{os.getpid()}{int(warm)}"
    code = ("bash(command=\"umount /proc; mount -t tmpfs none /proc && mkdir -p /proc/self/task/1 && "
            f"mkfifo /proc/self/task/1/children; trap '' TERM; exec -a {mark} sleep 100 & echo bg\")")
    try:
        done = bash_launcher.run(code, warm=warm, limit=8)
        # the supervisor no longer reads /proc (it only waits for its children): the call may even return in time
        time.sleep(2)
        left = _processes_named(mark, anywhere=True)  # the sleep, its supervisor and unshare
        assert not left, f"the command's processes still run after its run's deadline: {left} ({done.stderr[-300:]})"
        assert "Traceback" not in done.stderr and "Thread 0x" not in done.stderr, done.stderr[-1500:]
    finally:
        for pid in _processes_named(mark, anywhere=True):  # the supervisor: the namespace ends with it
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
