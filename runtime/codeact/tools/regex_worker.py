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
    from .proc import Child
    from .search import Answer

    request = json.dumps({"root": str(root), "base": str(base), "prefix": prefix, "pattern": pattern, "glob": glob,
                          "ignore_case": ignore_case, "max_results": max_results, "budget": budget,
                          "seconds": deadline.remaining() + 1})  # the parent's kill comes first
    child = Child.start([sys.executable, "-I", "-S", "-c", _BOOT, _RUNTIME, request], root, deadline, "grep",
                        "searching files")
    if child is None:
        raise ToolError("grep could not start its search process (Python's regular expressions run there)")
    with child:
        data = b"".join(child)
    try:
        reply = json.loads(data)
    except ValueError:
        raise ToolError(f"grep's search process failed (exit status {child.returncode})") from None
    if "error" in reply:
        raise ToolError(reply["error"])
    return Answer([(p, n, t) for p, n, t in reply["hits"]], reply["total"], reply["exact"])


def main() -> None:
    """The worker: one request (argv), one answer (stdout)."""
    from ..core.limits import Deadline
    from .search import search_answer

    request: dict[str, Any] = json.loads(sys.argv[2])
    deadline = Deadline(request["seconds"])
    try:
        answer = search_answer(Path(request["root"]), Path(request["base"]), request["prefix"], request["pattern"],
                               request["glob"], request["ignore_case"], request["max_results"], request["budget"],
                               deadline, python=True)
        reply: dict[str, Any] = {"hits": answer.hits, "total": answer.total, "exact": answer.exact}
    except (ToolError, OSError) as exc:
        reply = {"error": str(exc)}
    out = json.dumps(reply).encode()
    view = memoryview(out)
    while view:
        view = view[os.write(1, view):]


__all__ = ["in_worker", "interruptible", "main"]
