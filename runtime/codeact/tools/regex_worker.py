"""grep's Python search in a process of its own, where the run's deadline can stop it.

A pattern ripgrep cannot run (a look-around, a back-reference) is matched by Python's ``re``, whose C loop holds the
interpreter while it backtracks: only ``SIGALRM`` interrupts it, and only on the main thread (a run in process). A
run on a thread (the warm server's) searches in this worker instead: a child Python, killed at the run's deadline,
so no pattern can hold the server. It imports the runtime only (``-I -S``) and prints one JSON answer.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ToolError

if TYPE_CHECKING:
    import re

    from ..core.limits import Deadline
    from .search import Answer

_RUNTIME = str(Path(__file__).resolve().parents[2])  # the folder holding the codeact package
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.regex_worker import main; main()"


def interruptible() -> bool:
    """Whether the run's deadline can interrupt a regular expression here (``SIGALRM``, POSIX main thread, the
    signal free), as :meth:`codeact.core.limits.Deadline.interrupting` does."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))


def in_worker(root: Path, base: Path, prefix: str, pattern: str, glob: str | None, ignore_case: bool,
              max_results: int, budget: int, deadline: "Deadline") -> "Answer":
    """grep's answer searched by Python in a child process, killed at ``deadline`` (the call then raises the
    deadline's TimeoutError)."""
    from .search import Answer

    request = json.dumps({"root": str(root), "base": str(base), "prefix": prefix, "pattern": pattern, "glob": glob,
                          "ignore_case": ignore_case, "max_results": max_results, "budget": budget,
                          "seconds": deadline.remaining() + 1})  # the parent's kill comes first
    reply = _ask(root, request, deadline)
    return Answer([(p, n, t) for p, n, t in reply["hits"]], reply["total"], reply["exact"])


def first_in_files(start: Path, names: list[str], regex: "re.Pattern[str]", count: int, budget: int, extra: int,
                   deadline: "Deadline") -> list[list[Any]]:
    """The first matches, ``[rel, line, text]``, of the files ``names`` (below ``start``, sorted), searched one by
    one by Python in a child process killed at ``deadline``: grep's re-run when far more lines match than can be
    returned. The list of names goes through a private temporary file (it may pass the argument size limit)."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="codeact-grep-", suffix=".json") as spec:
        json.dump({"start": str(start), "names": names, "pattern": regex.pattern, "flags": regex.flags,
                   "count": count, "budget": budget, "extra": extra, "seconds": deadline.remaining() + 1}, spec)
        spec.flush()
        reply = _ask(start, f"@{spec.name}", deadline)
    return reply["hits"]


def _ask(cwd: Path, request: str, deadline: "Deadline") -> dict[str, Any]:
    from .proc import Child

    child = Child.start([sys.executable, "-I", "-S", "-c", _BOOT, _RUNTIME, request], cwd, deadline, "grep",
                        "searching files")
    if child is None:
        raise ToolError("grep could not start its search process (Python's regular expressions run there)")
    with child:
        data = b"".join(child)
    try:
        reply: dict[str, Any] = json.loads(data)
    except ValueError:
        raise ToolError(f"grep's search process failed (exit status {child.returncode})") from None
    if "error" in reply:
        raise ToolError(reply["error"])
    return reply


def main() -> None:
    """The worker: one request (argv: JSON, or ``@FILE`` holding it), one answer (stdout)."""
    from ..core.limits import Deadline

    raw = sys.argv[2]
    request: dict[str, Any] = json.loads(Path(raw[1:]).read_text(encoding="utf-8") if raw.startswith("@") else raw)
    deadline = Deadline(request["seconds"])
    try:
        reply = _first_in_files(request, deadline) if "names" in request else _search(request, deadline)
    except (ToolError, OSError) as exc:
        reply = {"error": str(exc)}
    out = json.dumps(reply).encode()
    view = memoryview(out)
    while view:
        view = view[os.write(1, view):]




def _search(request: dict[str, Any], deadline: "Deadline") -> dict[str, Any]:
    from .search import search_answer

    answer = search_answer(Path(request["root"]), Path(request["base"]), request["prefix"], request["pattern"],
                           request["glob"], request["ignore_case"], request["max_results"], request["budget"],
                           deadline, python=True)
    return {"hits": answer.hits, "total": answer.total, "exact": answer.exact}


def _first_in_files(request: dict[str, Any], deadline: "Deadline") -> dict[str, Any]:
    import re

    from .search import FirstItems, Glob, _Search

    extra = request["extra"]
    found = FirstItems(request["count"], request["budget"], lambda hit: len(hit[0]) + len(hit[2]) + extra)
    search = _Search(re.compile(request["pattern"], request["flags"]), Glob("**"), None, None, found, extra, deadline)
    search.first_in_files(Path(request["start"]), request["names"])
    hits, _ = search.found.result()
    return {"hits": hits}


__all__ = ["first_in_files", "in_worker", "interruptible", "main"]
