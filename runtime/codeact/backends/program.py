"""What a backend is handed (:class:`Program`) and what it must offer (:class:`Backend`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from ..core.boundary import Workspace
from ..core.limits import Limits
from ..core.tool import Tool


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


__all__ = ["Backend", "Program"]
