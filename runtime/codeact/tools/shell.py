"""The bash tool: one shell command in the workspace, in its own process group, bounded in time and output."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from ..core import notices
from ..core.tool import ToolContext
from . import bash_namespace, orphans

TIMEOUT_EXIT_CODE = 124  # as GNU timeout(1) reports a command it stopped
_GRACE = 0.5  # seconds the rest of the group may keep writing after the shell exits, or may take to stop on SIGTERM


def bash(ctx: ToolContext, *, command: str, timeout: float = 60) -> dict:
    """Run ``command`` with ``bash -c`` in the workspace root: ``{"stdout", "stderr", "exit_code"}``.

    No input is given (stdin is empty). At ``timeout`` seconds the command and every process it started are
    killed; ``exit_code`` is then 124 and ``stderr`` ends with a line saying so. At the run's deadline, if that comes
    first, they are killed too and the call fails with a TimeoutError saying so.
    Processes left running in the background are stopped when the command returns. On Linux the command usually
    runs in a process namespace of its own: ``ps`` and ``kill`` see only the processes it started. Each stream keeps
    at most the tool-result limit; the cut is marked. The command runs with your permissions: it is not sandboxed.
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command must be a non-empty string, e.g. bash(command='ls -la')")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")  # NaN: never
    deadline = ctx.run_deadline()
    deadline.check("bash", "starting the command")
    run_left = deadline.remaining()
    limit = min(float(timeout), run_left)
    cap = int(ctx.limits.tool_result)
    before = orphans.children() if SUPERVISED and orphans.become_subreaper() else set()
    call = orphans.mark()
    environ = {**(ctx.environ or os.environ), orphans.CALL_VARIABLE: call}
    proc = subprocess.Popen(
        _argv(command, environ), cwd=ctx.workspace.root, env=environ, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
    with _CALLS_LOCK:
        _CALLS[proc] = threading.get_ident()
    try:
        out, err = _Capture(cap), _Capture(cap)
        try:
            timed_out = _pump(proc, {proc.stdout: out, proc.stderr: err}, time.monotonic() + limit)
        except BaseException:  # whatever stopped the pumping, nothing the call started outlives it
            _abandon(proc, before, call)
            raise
        if SUPERVISED and timed_out:  # the supervisor stops what left the group, then exits
            _stop_supervised(proc)
        _stop_group(proc, graceful=timed_out)
    finally:
        with _CALLS_LOCK:
            del _CALLS[proc]
    for stream in (proc.stdout, proc.stderr):
        stream.close()  # type: ignore[union-attr]
    code = proc.wait()
    if code < 0:  # as a shell reports a command a signal ended (the supervisor in a namespace reports it so too)
        code = 128 - code
    if SUPERVISED:  # what a command that killed or stopped its supervisor left (codeact.tools.orphans)
        orphans.sweep(before, call)
    stderr = err.text()
    if timed_out and limit >= run_left:
        raise deadline.stopped("bash", f"running {_shown(command)} (it and every process it started were killed)")
    if timed_out:
        note = (f"[codeact: the command did not finish within {limit:g} s and was killed with every process it "
                f"started; raise timeout=... or run less at once]")
        stderr = f"{stderr}\n{note}" if stderr and not stderr.endswith("\n") else f"{stderr}{note}"
        code = TIMEOUT_EXIT_CODE
    for name, capture in (("stdout", out), ("stderr", err)):
        if capture.dropped:
            notices.note("bash()", f"{name} of {_shown(command)}: returned the first {capture.kept:,} of "
                                   f"{capture.kept + capture.dropped:,} bytes (the tool-result limit); filter in the "
                                   "command (grep, head, tail, wc -l) or write to a file and view it by view_range")
    return {"stdout": out.text(), "stderr": stderr, "exit_code": code}


# Linux: bash runs under a child subreaper that kills what left its process group (setsid, a double fork) when the
# call ends (codeact/tools/bash_reaper.py), as the init of a PID namespace of its own where one can be made
# (codeact/tools/bash_namespace.py); elsewhere bash runs alone and its process group is what is stopped
SUPERVISED = sys.platform.startswith("linux")
_REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bash_reaper.py")


_CALLS: dict[subprocess.Popen[bytes], int] = {}  # the calls in flight -> the thread (the run) that made each
_CALLS_LOCK = threading.Lock()


def stop_calls(thread: int | None = None) -> None:
    """Kill the calls in flight — those ``thread`` made, or all — and what they started (their supervisor's group:
    with a PID namespace, everything in it). The warm server does this for a run whose client went away, and as it
    exits."""
    with _CALLS_LOCK:
        calls = [proc for proc, made_by in _CALLS.items() if thread is None or made_by == thread]
    for proc in calls:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def _argv(command: str, environ: dict[str, str]) -> list[str]:
    if not SUPERVISED:
        return ["bash", "-c", command]
    return [*bash_namespace.prefix(environ), sys.executable, "-S", "-I", _REAPER, command]


def _stop_supervised(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the supervisor (and the group), then the supervisor's time to stop every process it has."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    try:
        proc.wait(timeout=2 * _GRACE + 1)
    except subprocess.TimeoutExpired:
        pass  # _stop_group kills the group; what left it is the supervisor's and dies with it only if it can


def _abandon(proc: subprocess.Popen[bytes], before: set[int], call: str) -> None:
    """Kill the call's group (its supervisor with it), reap the shell and sweep what left the group: the pumping
    failed, so the call ends here with nothing it started still running."""
    _stop_group(proc, graceful=False)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    try:
        proc.wait(timeout=2 * _GRACE + 1)
    except subprocess.TimeoutExpired:
        pass
    if SUPERVISED:
        orphans.sweep(before, call)


def _shown(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    return repr(line if len(line) <= 60 else line[:60] + "...")


class _Capture:
    """Bytes of one stream, kept up to ``cap``; the rest is counted so the cut can be shown."""

    def __init__(self, cap: int) -> None:
        self.chunks: list[bytes] = []
        self.cap, self.kept, self.dropped = cap, 0, 0

    def add(self, data: bytes) -> None:
        room = self.cap - self.kept
        if room > 0:
            self.chunks.append(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))

    def text(self) -> str:
        text = b"".join(self.chunks).decode("utf-8", "replace")
        if self.dropped:
            text += f"\n... [truncated {self.dropped} more bytes; narrow your query]"
        return text


def _pump(proc: subprocess.Popen[bytes], captures: dict[Any, _Capture], deadline: float) -> bool:
    """Read both pipes until they close, or the deadline passes (True), or the shell exited and a grace elapsed."""
    import selectors

    fds = {stream.fileno(): captures[stream] for stream in captures}
    with selectors.DefaultSelector() as sel:
        for fd in fds:
            sel.register(fd, selectors.EVENT_READ)
        exited_at = None
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return True
            if exited_at is None and _exited(proc):
                exited_at = now  # background children may hold the pipes open: give them a moment, then stop
            if exited_at is not None and now - exited_at > _GRACE:
                return False
            wait = min(deadline - now, 0.1 if exited_at is None else _GRACE)
            for key, _ in sel.select(wait):
                data = os.read(key.fd, 65536)
                if data:
                    fds[key.fd].add(data)
                else:
                    sel.unregister(key.fd)
    return False


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the shell has exited, without reaping it (so its pid, the group's id, cannot be reused yet)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, ChildProcessError, OSError):
        return proc.poll() is not None


def _stop_group(proc: subprocess.Popen[bytes], *, graceful: bool) -> None:
    """Stop every process of the shell's group: SIGTERM and, after a grace, SIGKILL (at once when not graceful).

    The group keeps its id while any member lives, so signalling it after the shell was reaped is safe.
    """
    pgid = proc.pid
    if graceful:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        end = time.monotonic() + _GRACE
        while time.monotonic() < end:
            proc.poll()  # reap the shell, so a group of one dead shell counts as gone
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.02)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
