"""previous_output: read back what an earlier run printed, from the output store (codeact.core.outputs)."""
from __future__ import annotations

from .base import ToolContext


def previous_output(ctx: ToolContext, *, run: str, first_line: int = 1, last_line: int | None = None) -> str:
    """Lines ``first_line``..``last_line`` of an earlier run's whole output: the run a cut line names.

    A cut output ends in ``[cut: N more bytes, M lines; read them with previous_output(run="ID", first_line=K)]``.
    Lines are numbered from 1, stdout first, then stderr, as the run printed them; ``last_line=None`` reads to the
    end (the result is still cut at the tool-result limit, and what you print at the output cap). Reads the store
    of this workspace only (the last 20 cut runs, 8 MiB); it never runs anything again.
    """
    from ..core.outputs import OutputStore, previous_lines

    store = OutputStore.for_workspace(ctx.workspace.root, ctx.environ)
    return previous_lines(store, run, first_line, last_line)
