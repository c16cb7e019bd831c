"""grep's Python search in a process of its own, where the run's deadline can stop it.

A pattern ripgrep cannot run (a look-around, a back-reference) is matched by Python's ``re``, whose C loop holds the
interpreter while it backtracks: only ``SIGALRM`` interrupts it, and only on the main thread (a run in process). A
run on a thread (the warm server's) searches in this worker instead: a child Python, killed at the run's deadline,
so no pattern can hold the server. It imports the runtime only (``-I -S``), calls the handler its request names
(``"module:function"``, e.g. grep's in codeact.tools.search.grep_lines) and prints one JSON answer.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ToolError

if TYPE_CHECKING:
    from ...core.limits import Deadline

_RUNTIME = str(Path(__file__).resolve().parents[3])  # the folder holding the codeact package
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.search.regex_worker import main; main()"
_INLINE = 32 * 1024  # a request longer than this goes through a private temporary file (argument size limits)


def interruptible() -> bool:
    """Whether the run's deadline can interrupt a regular expression here (``SIGALRM``, POSIX main thread, the
    signal free), as :meth:`codeact.core.limits.Deadline.interrupting` does."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))


def ask(cwd: Path, handler: str, request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """``handler`` (``"module:function"``, taking the request and a Deadline) answered in a child Python killed at
    ``deadline`` (the call then raises the deadline's TimeoutError); raises ToolError with the child's error."""
    import tempfile

    body = json.dumps({**request, "handler": handler, "seconds": deadline.remaining() + 1})  # the parent's kill first
    if len(body) <= _INLINE:
        return _ask(cwd, body, deadline)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="codeact-grep-", suffix=".json") as spec:
        spec.write(body)
        spec.flush()
        return _ask(cwd, f"@{spec.name}", deadline)


def _ask(cwd: Path, request: str, deadline: Deadline) -> dict[str, Any]:
    from ..proc import Child

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
    """The worker: one request (argv: JSON, or ``@FILE`` holding it) naming its handler, one answer (stdout)."""
    import importlib

    from ...core.limits import Deadline

    raw = sys.argv[2]
    request: dict[str, Any] = json.loads(Path(raw[1:]).read_text(encoding="utf-8") if raw.startswith("@") else raw)
    deadline = Deadline(request["seconds"])
    module, _, function = request["handler"].partition(":")
    try:
        reply = getattr(importlib.import_module(module), function)(request, deadline)
    except (ToolError, OSError) as exc:
        reply = {"error": str(exc)}
    out = json.dumps(reply).encode()
    view = memoryview(out)
    while view:
        view = view[os.write(1, view):]


__all__ = ["ask", "interruptible", "main"]
