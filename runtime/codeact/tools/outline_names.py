"""outline's ``name=`` filter: the regular expression matched where the run's deadline can stop it.

Python's ``re`` may backtrack for ever on a pattern such as ``(a|aa)*c``, in a C loop that holds the interpreter.
On the main thread the deadline's ``SIGALRM`` interrupts it (:meth:`codeact.core.limits.Deadline.interrupting`);
elsewhere (the warm server's runs) the names are matched in grep's worker process, which is killed at the deadline
(:mod:`codeact.tools.search.regex_worker`). Each distinct name is matched once, however many items share it.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.limits import Deadline
from ..errors import ToolError, ToolTimeout

_HANDLER = "codeact.tools.outline_names:answer"


class NameFilter:
    """The names ``pattern`` matches whole, asked in batches: :meth:`ask` matches the names not asked yet, then
    ``name in self`` says whether one matched."""

    __slots__ = ("pattern", "root", "deadline", "asked", "chosen")

    def __init__(self, pattern: re.Pattern[str], root: Path, deadline: Deadline) -> None:
        self.pattern, self.root, self.deadline = pattern, root, deadline
        self.asked: set[str] = set()
        self.chosen: set[str] = set()

    def ask(self, names: Iterable[str]) -> None:
        """Match each name of ``names`` not matched before (stopped at the run's deadline)."""
        from .search import regex_worker

        new = sorted(set(names) - self.asked)
        if not new:
            return
        detail = f"matching names against name={self.pattern.pattern!r}"
        if regex_worker.interruptible():
            with self.deadline.interrupting("outline", detail):
                self.chosen.update(one for one in new if self.pattern.fullmatch(one) is not None)
        else:
            self.deadline.check("outline", detail)
            try:
                reply = regex_worker.ask(self.root, _HANDLER, {"pattern": self.pattern.pattern, "names": new},
                                         self.deadline)
            except ToolTimeout:  # the worker names itself grep's
                raise self.deadline.stopped("outline", detail) from None
            except ToolError as exc:
                raise ToolError(f"outline could not match name=: {exc}") from None
            self.chosen.update(new[i] for i in reply["matched"])
        self.asked.update(new)

    def __contains__(self, name: object) -> bool:
        return name in self.chosen


def answer(request: dict[str, Any], _deadline: Deadline) -> dict[str, Any]:
    """The worker's side: the indexes of the names the pattern matches whole (the parent kills it at the deadline)."""
    pattern = re.compile(request["pattern"])
    return {"matched": [i for i, one in enumerate(request["names"]) if pattern.fullmatch(one) is not None]}


__all__ = ["NameFilter", "answer"]
