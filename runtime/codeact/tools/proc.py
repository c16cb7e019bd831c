"""A helper process read by the run's deadline: its output as it comes, the process killed when the deadline passes.

The search tools run ripgrep through it, so no search outlives the run and no output is held whole: the caller
consumes each chunk (and keeps what it needs) before the next is read.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.limits import Deadline

if TYPE_CHECKING:
    import subprocess

    from ..errors import ToolError

CHUNK = 1 << 16
# A streaming child (ripgrep) writes a little at a time: reading each write as it comes wakes this process thousands
# of times a search, and on a small machine that CPU is taken from the child's own threads (~20% of a 50,000-file
# grep on 2 CPUs). So its pipe is widened and, after a short read, the reader waits a moment for more to gather.
STREAM_PIPE = 1 << 20  # bytes: Linux's default limit for an unprivileged process (/proc/sys/fs/pipe-max-size)
STREAM_WAIT_S = 0.001
STREAM_AFTER = 4  # reads before the first wait


class Child:
    """``cmd`` started in ``cwd``, stdin empty, stderr dropped; iterate for its stdout, in chunks.

    At the deadline a timer kills it, and iterating raises the deadline's error for ``tool``. Leaving the ``with``
    block early (the caller has enough) kills it too. ``returncode`` is set once the output ended.
    ``Child.start`` returns ``None`` when the program cannot be started.
    """

    def __init__(self, proc: subprocess.Popen[bytes], deadline: Deadline, tool: str, detail: str,
                 stream: bool = False) -> None:
        self.proc, self.deadline, self.tool, self.detail = proc, deadline, tool, detail
        self.returncode: int | None = None
        self.killed = False
        self.stream = stream
        self.memory: int | None = None  # the run's memory limit, where the child's address space is bounded by it

    @classmethod
    def start(cls, cmd: list[str], cwd: Path, deadline: Deadline, tool: str, detail: str,
              stream: bool = False, confined: tuple[str, ...] | None = None,
              memory: int | None = None, stdin: int | None = None, pass_fds: tuple[int, ...] = ()) -> Child | None:
        """``stream``: the child writes much, a little at a time (see :data:`STREAM_PIPE`); its output is read in
        batches, never more than :data:`STREAM_PIPE` bytes at once. ``confined``: the child reads nothing outside
        the :func:`codeact.tools.confine.reads_below` root but these files (where the kernel can hold it).
        ``memory`` (not with ``confined``): the child's address space is bounded by it
        (:func:`codeact.tools.confine.address_space`); a child the bound ended is the caller's to tell by
        ``returncode``. ``stdin``: a descriptor the child reads as its input (else none); ``pass_fds``: descriptors
        it inherits, as :class:`subprocess.Popen` passes them."""
        import subprocess  # not at start-up: most runs never search

        from . import confine

        deadline.check(tool, detail)
        fence = confine.preexec(confined) if confined is not None else (
            confine.address_space(memory) if memory is not None else None)
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL if stdin is None else stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, preexec_fn=fence,
                                    pass_fds=pass_fds)
        except OSError:
            return None
        finally:
            confine.close(fence)
        child = cls(proc, deadline, tool, detail, stream)
        child.memory = confine.memory_of(fence)
        return child

    def __iter__(self) -> Iterator[bytes]:
        import threading

        def stop() -> None:
            self.killed = True
            self._kill()

        timer = threading.Timer(self.deadline.remaining(), stop)
        timer.daemon = True
        timer.start()
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        size, wait = CHUNK, 0.0
        if self.stream:
            size, wait = _widened(fd), STREAM_WAIT_S
        reads = 0
        try:
            while True:
                data = os.read(fd, size)
                if not data:
                    break
                yield data
                reads += 1
                # a stream (a few reads already) that is still being written: let more gather; a short output,
                # or one whose writer has ended, is read on at once
                if wait and reads >= STREAM_AFTER and len(data) < size // 4 and self.proc.poll() is None:
                    time.sleep(wait)
            if self.killed:
                raise self.deadline.stopped(self.tool, self.detail)
            self.returncode = self.proc.wait()
        finally:
            timer.cancel()
        if self.killed:
            raise self.deadline.stopped(self.tool, self.detail)
        if self.returncode < 0 and self.memory is not None:  # what it wrote is part of an answer only: no answer
            raise self._failed(-self.returncode)

    def _failed(self, signum: int) -> ToolError:
        """The error of a child a signal ended: most likely its allocation failed at the bound (it aborts)."""
        import signal

        from .. import errors

        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        program = os.path.basename(str(self.proc.args[0] if isinstance(self.proc.args, list) else self.proc.args))
        megs = self.memory // (1 << 20) if self.memory else 0
        return errors.ToolError(
            f"{self.tool}() failed while {self.detail}: {program} was ended by {name}, most likely as it needed more "
            f"than the run's memory limit of {megs} MiB allows it (a long .gitignore or other ignore file, a huge "
            "folder); nothing it found is returned. Narrow the call (path=, a more specific pattern), or raise "
            "CODEACT_MEMORY")

    def _kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self._kill()
        self.proc.wait()
        self.proc.stdout.close()  # type: ignore[union-attr]


def _widened(fd: int) -> int:
    """Widen the pipe ``fd`` reads to :data:`STREAM_PIPE` where the system allows it; the size to read at once."""
    try:
        import fcntl

        return max(CHUNK, fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, STREAM_PIPE))
    except (ImportError, AttributeError, OSError):  # not Linux, or a lower limit: the default pipe
        return CHUNK
