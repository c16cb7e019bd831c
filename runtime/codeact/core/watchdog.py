"""A deadline kept outside the interpreter, for a run in this process: a tool that holds the interpreter (C code
keeping the GIL) stops every deadline the run keeps in Python, but not a timer in a C thread."""
from __future__ import annotations

import faulthandler

WATCHDOG_GRACE_S = 1.8  # past the run's time limit: a run in this process ends by its timeout + 2 s


class Watchdog:
    """Ends this process unless :meth:`close` comes within the run's ``timeout`` plus :data:`WATCHDOG_GRACE_S`:
    ``faulthandler``'s timer, a C thread that needs no interpreter lock, prints ``Timeout (H:MM:SS)!`` and every
    thread's stack (the tool that holds the interpreter on top) on stderr, then exits 1. It costs nothing a run (a
    watchdog process would cost one more process a run)."""

    def __init__(self, timeout: float) -> None:
        try:
            faulthandler.dump_traceback_later(timeout + WATCHDOG_GRACE_S, exit=True, file=2)  # stderr
            self.armed = True
        except (AttributeError, ValueError, OSError, RuntimeError):
            self.armed = False  # no usable stderr (closed, or not a file): the run goes unguarded

    def close(self) -> None:
        """Disarm the timer (the run ended in time)."""
        if self.armed:
            faulthandler.cancel_dump_traceback_later()
            self.armed = False
