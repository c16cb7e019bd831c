"""previous_output: read back what an earlier run printed, from the output store (codeact.core.outputs)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from ..core import notices
from ..core.tool import ToolContext


def previous_output(ctx: ToolContext, *, run: str, first_line: int = 1, last_line: int | None = None) -> str:
    """Lines ``first_line``..``last_line`` of an earlier run's whole output: the run a cut line names.

    A cut output ends in ``[cut: N more bytes, M lines; read them with previous_output(run="ID", first_line=K)]``.
    Lines are numbered from 1, stdout first, then stderr, as the run printed them; ``last_line=None`` reads to the
    end. What passes the tool-result limit is left out at a line's end, and a ``note:`` line names the first line
    left out (read on with ``first_line=``); what you print is still cut at the output cap. Reads the store of this
    workspace only (the last 20 cut runs, 8 MiB); it never runs anything again.
    """
    from ..core.outputs import OutputStore, previous_lines

    store = OutputStore.for_workspace(ctx.workspace.root, ctx.environ)
    text = previous_lines(store, run, first_line, last_line)
    cap = int(ctx.limits.tool_result)
    if len(text) * 4 <= cap or len(text.encode("utf-8", "surrogatepass")) <= cap:
        return text
    kept, size = [], 0
    lines = text.split("\n")
    for line in lines:
        size += len(line.encode("utf-8", "surrogatepass")) + 1
        if size > cap:
            break
        kept.append(line)
    shown = len(kept)
    total = len(lines) - (1 if text.endswith("\n") else 0)
    notices.note("previous_output()", f"run {run}: returned lines {first_line}-{first_line + shown - 1} of "
                                      f"{first_line}-{first_line + total - 1} (the {cap:,}-byte tool-result limit); "
                                      f"read on with previous_output(run={run!r}, first_line={first_line + shown})")
    return "".join(line + "\n" for line in kept)
