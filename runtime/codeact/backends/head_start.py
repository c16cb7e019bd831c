"""A head start for a run in this process (no warm server): the monty worker boots while the run imports and
checks what it needs."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from collections.abc import Mapping

from ..core.config import Settings
from . import choose


def start_sandbox_early(requested: str | None, environ: Mapping[str, str]) -> None:
    """Start the monty worker now if the run will use monty. Only a head start: the run chooses its backend again
    and reports any problem itself."""
    try:
        if choose(requested, Settings.load().backend, environ).name == "monty":
            from .monty import start_early

            start_early()
    except Exception:  # noqa: BLE001 - the run itself says what is wrong, in its own order
        pass
