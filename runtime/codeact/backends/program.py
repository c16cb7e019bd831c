"""What a backend is handed (:class:`Program`) and what it must offer (:class:`Backend`)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from ..core.boundary import Workspace
from ..core.limits import Limits
from ..core.tool import Tool
from ..errors import ErrorInfo

MAX_NESTING = 200  # the sandbox's parser refuses a program nested deeper ("Source is too deeply nested")


class Program(NamedTuple):
    """Everything a backend needs to run one program."""

    code: str
    tools: Mapping[str, Tool]  # by the name the program calls ("view", "server.tool")
    stubs: str  # type-check stubs of ``tools``
    limits: Limits
    call_tool: Callable[[str, tuple[Any, ...], dict[str, Any]], Any]  # the runner's dispatcher; raises on failure
    on_print: Callable[[str], None]  # receives printed text as it is produced
    pin_cpu: bool = True  # a backend with a worker process may keep it and this process on one CPU
    on_note: Callable[[str], None] | None = None  # receives type-check notes (shown after the run, never refused)
    state: Mapping[str, Any] | None = None  # `run --session`: globals to set before the program (plain data)
    on_state: Callable[[dict[str, Any]], None] | None = None  # `run --session`: receives the plain-data globals after
    workspace: Workspace | None = None  # what the program's own file calls (open, pathlib, os.walk) may read
    on_print_err: Callable[[str], None] | None = None  # receives what the program prints to sys.stderr


class Backend(Protocol):
    """Runs a :class:`Program` and returns the value of its last expression (``None`` if there is none).

    Raises :class:`codeact.errors.ProgramError` when the program fails, with the error as the model should see it.
    """

    name: str

    def execute(self, program: Program) -> Any: ...


def nesting_error(code: str) -> ErrorInfo | None:
    """The error of a program nested too deeply for the host's own parsing (CPython's ``ast`` raises MemoryError
    or RecursionError, and the runtime's walks of the tree recurse): a SyntaxError as the sandbox's parser gives
    one; ``None`` when the program is not that deep (the failure had another cause). Called only after a run
    failed that way: a depth walk on every run would cost each run its time."""
    import ast

    from ..pyast import parse

    try:
        tree = parse(code)
    except (MemoryError, RecursionError):
        deepest = None
    except (SyntaxError, ValueError):
        return None
    else:
        deepest = 0
        stack: list[tuple[ast.AST, int]] = [(tree, 1)]
        while stack:  # iterative: a recursive walk is what failed
            node, depth = stack.pop()
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
        if deepest <= MAX_NESTING:
            return None
    levels = "more levels than CPython's parser allows" if deepest is None else f"{deepest:,} levels"
    return ErrorInfo("SyntaxError", f"Source is too deeply nested: the program nests expressions {levels}, and the "
                                    f"sandbox parses at most about {MAX_NESTING}; compute it in steps (a loop, or "
                                    "one variable per step)", None, None)


__all__ = ["MAX_NESTING", "Backend", "Program", "nesting_error"]
