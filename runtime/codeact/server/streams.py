"""``sys.stdout`` and ``sys.stderr`` of the server, routed per thread: what a run prints reaches its own client.

The command line and the tools print with ``print(..., file=sys.stderr)``; in the server several runs do so at once
from their own threads. :func:`install` replaces both streams by a :class:`Routed` stream whose writes go to the
writer the current thread registered with :func:`routed`, else to the server's log.
"""
from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

Writer = Callable[[str], None]


class Routed(io.TextIOBase):
    """A text stream that writes to the current thread's writer, else to ``default``."""

    def __init__(self, default: TextIO, local: threading.local, slot: str) -> None:
        super().__init__()
        self._default, self._local, self._slot = default, local, slot

    def write(self, text: str) -> int:
        writer: Writer | None = getattr(self._local, self._slot, None)
        if writer is None:
            self._default.write(text)
        else:
            writer(text)
        return len(text)

    def flush(self) -> None:
        if getattr(self._local, self._slot, None) is None:
            self._default.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


_LOCAL = threading.local()


def install() -> None:
    """Route ``sys.stdout`` and ``sys.stderr`` per thread from now on (idempotent)."""
    if not isinstance(sys.stdout, Routed):
        sys.stdout = Routed(sys.stdout, _LOCAL, "out")
    if not isinstance(sys.stderr, Routed):
        sys.stderr = Routed(sys.stderr, _LOCAL, "err")


@contextlib.contextmanager
def routed(out: Writer, err: Writer) -> Iterator[None]:
    """Within the block, this thread's prints go to ``out`` and ``err``."""
    previous = getattr(_LOCAL, "out", None), getattr(_LOCAL, "err", None)
    _LOCAL.out, _LOCAL.err = out, err
    try:
        yield
    finally:
        _LOCAL.out, _LOCAL.err = previous


__all__ = ["Routed", "install", "routed"]
