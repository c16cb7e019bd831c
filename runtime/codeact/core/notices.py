"""Notes a run leaves for the model: what a tool did not return, and how to get the rest.

A model reads one printed answer and trusts it, so a tool that returns less than everything (a cap, a cut, a
skipped file, a failed server) says so here. The runner collects the notes of the run in progress in this thread
and prints each as one ``note: TOOL: ...`` line after the output (``--json``: ``notes``); a cut output keeps them.

A tool calls :func:`note`; outside a run (a test calling the tool directly) the note is kept nowhere.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

MAX_NOTES = 20  # notes shown per run; a loop that hits one cap a thousand times says so once, then counts

_CURRENT = threading.local()


class Notes:
    """The notes of one run: each said once, at most :data:`MAX_NOTES`, then how many more there were."""

    __slots__ = ("items", "extra", "_seen")

    def __init__(self) -> None:
        self.items: list[str] = []
        self.extra = 0
        self._seen: set[str] = set()

    def add(self, text: str) -> None:
        if text in self._seen:
            return
        self._seen.add(text)
        if len(self.items) < MAX_NOTES:
            self.items.append(text)
        else:
            self.extra += 1

    def shown(self) -> list[str]:
        """What the run prints: the notes, then one line for those past :data:`MAX_NOTES`."""
        if not self.extra:
            return list(self.items)
        return [*self.items, f"{self.extra} more notes like these were not shown"]

    def activate(self) -> Notes | None:
        """Collect this thread's notes here; returns the previous collector, for :func:`restore`."""
        previous = getattr(_CURRENT, "notes", None)
        _CURRENT.notes = self
        return previous


def restore(previous: Notes | None) -> None:
    _CURRENT.notes = previous


def current() -> Notes | None:
    """The collector of the run in progress in this thread, if any."""
    return getattr(_CURRENT, "notes", None)


def note(tool: str, text: str) -> None:
    """Tell the model that ``tool`` returned less than everything: ``text`` says what was kept, what was dropped and
    how to get the rest (e.g. ``"returned 1,000 of 7,756 matches (max_results=1000); raise max_results= or narrow
    the pattern"``)."""
    collector = getattr(_CURRENT, "notes", None)
    if collector is not None:
        collector.add(f"{tool}: {text}" if tool else text)


def carried(func: Callable[[], object]) -> Callable[[], object]:
    """``func`` wrapped to collect into this thread's current notes when run in another thread (a helper thread of
    a tool call)."""
    collector = current()

    def run() -> object:
        previous = collector.activate() if collector is not None else current()
        try:
            return func()
        finally:
            restore(previous)

    return run


__all__ = ["MAX_NOTES", "Notes", "current", "note", "restore", "carried"]
