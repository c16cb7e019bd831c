"""How a command's process ends: `codeact.client.exit_now` skips the interpreter's teardown, losing nothing.

The launcher ends every command with ``exit_now`` (the teardown frees ~230 modules for nothing, ~25 ms of a cold run).
What the teardown does that a user can see must still happen, in its order: ``atexit`` callbacks, then buffered
output flushed, the exit code kept, a failed flush reported as 120 (as Python's own exit does), and a non-daemon
thread waited for.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
# buffered output, as a user's run has it (PYTHONUNBUFFERED, which some CI machines set, would flush at each write)
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(RUNTIME)}


def ends(body: str, *, stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """``body`` run as a script under ``python -S`` (as the launcher starts it), then ``exit_now(code)``."""
    script = ("import sys\nfrom codeact.client import exit_now\ncode = 0\n" + body + "\nexit_now(code)\n"
              "print('after exit_now', file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-S", "-c", script], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=60, env=ENV)


def test_buffered_output_and_atexit_callbacks_come_out_in_order_with_the_code() -> None:
    done = ends("import atexit\n"
                "atexit.register(lambda: print('callback', flush=False))\n"
                "print('x' * 200_000, end='|', flush=False)\n"
                "sys.stderr.write('err line\\n')\n"
                "code = 7\n")
    assert done.returncode == 7
    assert done.stdout == "x" * 200_000 + "|callback\n"
    assert done.stderr == "err line\n"


def test_the_teardown_is_skipped() -> None:
    """The point of it: objects are not freed one by one (a finaliser at teardown never runs)."""
    done = ends("class Noisy:\n    def __del__(self):\n        print('freed')\nkept = Noisy()\n")
    assert (done.returncode, done.stdout) == (0, "")
    plain = subprocess.run([sys.executable, "-S", "-c", "class Noisy:\n    def __del__(self):\n        print('freed')\n"
                            "kept = Noisy()\n"], capture_output=True, text=True, timeout=60, env=ENV)
    assert plain.stdout == "freed\n"  # the control: the same script torn down frees it


def _into_a_closed_pipe(script: str) -> int:
    """The exit code of ``script`` whose stdout is a pipe nobody reads any more when it ends."""
    child = subprocess.Popen([sys.executable, "-S", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=ENV)
    assert child.stdout is not None
    child.stdout.close()  # the reader is gone before the child flushes
    return child.wait(timeout=60)


def test_a_failed_flush_ends_with_120_as_python_does() -> None:
    buffered = "import sys, time\nsys.stdout.write('kept in the buffer')\ntime.sleep(0.3)\n"
    assert _into_a_closed_pipe(buffered) == 120  # the control: Python's own exit
    assert _into_a_closed_pipe(buffered + "from codeact.client import exit_now\nexit_now(0)\n") == 120


def test_a_running_non_daemon_thread_is_waited_for() -> None:
    done = ends("import threading, time\n"
                "def late():\n    time.sleep(0.3)\n    print('thread done', flush=True)\n"
                "threading.Thread(target=late).start()\ncode = 3\n")
    assert done.returncode == 3
    assert done.stdout == "thread done\n"
    assert "after exit_now" not in done.stderr


def test_a_daemon_thread_does_not_hold_the_exit() -> None:
    done = ends("import threading, time\n"
                "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nprint('main')\n")
    assert (done.returncode, done.stdout) == (0, "main\n")
