"""The notes channel (codeact.core.notices): what a tool did not return reaches the model once, in order, bounded."""
from __future__ import annotations

from pathlib import Path

from codeact.core import notices
from codeact.core.limits import Limits
from codeact.core.outputs import plain_streams
from codeact.core.tool import tool_from_function
from codeact.runner import run


def _capped(n: int) -> list[int]:
    """Return the first three of n numbers, and say so."""
    notices.note("capped()", f"returned 3 of {n} numbers; ask for fewer")
    return list(range(min(n, 3)))


def test_a_tool_note_reaches_the_run_once_per_text_and_is_printed_after_the_output(tmp_path: Path) -> None:
    tool = tool_from_function(_capped, name="capped")
    result = run("for n in (10, 10, 20):\n    capped(n=n)\nprint('done')", workspace=tmp_path, tools={"capped": tool},
                 backend="monty", limits=Limits(timeout=20))
    assert result.ok, result.error
    assert result.notes == ["capped(): returned 3 of 10 numbers; ask for fewer",
                            "capped(): returned 3 of 20 numbers; ask for fewer"]
    assert result.to_json()["notes"] == list(result.notes)
    out, err = plain_streams(result.stdout, result.result, result.error, result.notes)
    assert out == "done\n"
    assert err.splitlines() == [f"note: {n}" for n in result.notes]


def test_notes_past_the_bound_are_counted_not_listed(tmp_path: Path) -> None:
    tool = tool_from_function(_capped, name="capped")
    result = run(f"for n in range({notices.MAX_NOTES + 5}):\n    capped(n=n)", workspace=tmp_path,
                 tools={"capped": tool}, backend="monty", limits=Limits(timeout=20))
    assert result.ok, result.error
    assert len(result.notes) == notices.MAX_NOTES + 1
    assert result.notes[-1] == "5 more notes like these were not shown"


def test_a_note_outside_a_run_is_kept_nowhere() -> None:
    notices.note("capped()", "nobody listens")  # no collector: no error, nothing kept
    assert notices.current() is None
