"""A helper process read by the run's deadline: its output as it comes, the process killed when the deadline passes.

The search tools run ripgrep through it, so no search outlives the run and no output is held whole: the caller
consumes each chunk (and keeps what it needs) before the next is read.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.limits import Deadline

if TYPE_CHECKING:
    import subprocess

CHUNK = 1 << 16


class Child:
    """``cmd`` started in ``cwd``, stdin empty, stderr dropped; iterate for its stdout, in chunks.

    At the deadline a timer kills it, and iterating raises the deadline's error for ``tool``. Leaving the ``with``
    block early (the caller has enough) kills it too. ``returncode`` is set once the output ended.
    ``Child.start`` returns ``None`` when the program cannot be started.
    """

    def __init__(self, proc: subprocess.Popen[bytes], deadline: Deadline, tool: str, detail: str) -> None:
        self.proc, self.deadline, self.tool, self.detail = proc, deadline, tool, detail
        self.returncode: int | None = None
        self.killed = False

    @classmethod
    def start(cls, cmd: list[str], cwd: Path, deadline: Deadline, tool: str, detail: str) -> Child | None:
        import subprocess  # not at start-up: most runs never search

        deadline.check(tool, detail)
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, bufsize=0)
        except OSError:
            return None
        return cls(proc, deadline, tool, detail)

    def __iter__(self) -> Iterator[bytes]:
        import threading

        def stop() -> None:
            self.killed = True
            self._kill()

        timer = threading.Timer(self.deadline.remaining(), stop)
        timer.daemon = True
        timer.start()
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        try:
            while True:
                data = os.read(fd, CHUNK)
                if not data:
                    break
                yield data
            if self.killed:
                raise self.deadline.stopped(self.tool, self.detail)
            self.returncode = self.proc.wait()
        finally:
            timer.cancel()
        if self.killed:
            raise self.deadline.stopped(self.tool, self.detail)

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
