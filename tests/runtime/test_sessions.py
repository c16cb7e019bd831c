"""``--session``: what a run's globals keep for the next run, and what is not kept is named in a note."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from codeact.core import sessions
from codeact.core.config import Settings
from codeact.runner import run


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "CODEACT_CONFIG_DIR": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}


def _run(tmp_path: Path, code: str) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return run(code, workspace=ws, backend="monty", settings=Settings(), environ=_env(tmp_path), session="s")


@pytest.mark.parametrize("value_src", [
    "[]\nfor _ in range(60):\n    x = [x]",  # nested deeper than sessions.MAX_DEPTH
    "{1: 'one'}",  # a key JSON would make a string
    "float('nan')",
], ids=["deep", "int-key", "nan"])
def test_a_session_global_that_is_not_kept_is_named_in_a_note(tmp_path: Path, value_src: str) -> None:
    """Red team round 6: sessions.plain() dropped such a global before save() saw it, and nothing said so: the
    next run of the session got NameError for a global the previous run set."""
    first = _run(tmp_path, f"x = {value_src}\nkept = 1\n")
    assert first.ok, first
    second = _run(tmp_path, "print(kept)\nprint(type(x).__name__)\n")
    assert second.ok or any(re.search(r"\bx\b", note) for note in first.notes), (first.notes, second.error)


def test_the_note_says_why_each_global_was_not_kept_and_skips_functions(tmp_path: Path) -> None:
    code = ("import json\ndef helper():\n    return 1\nclass Box:\n    pass\nseen = {1, 2}\nraw = b'x'\n"
            "table = {1: 'one'}\nratio = float('inf')\nok = {'a': [1.5, None]}\n")
    first = _run(tmp_path, code)
    assert first.ok, first.error
    [note] = [n for n in first.notes if n.startswith("--session:")]
    for part in ("seen (a set)", "raw (a bytes)", "table (a dict key that is not a string)",
                 "ratio (NaN or infinity)"):
        assert part in note, note
    for name in ("json", "helper", "Box", "ok"):
        assert not re.search(rf"\b{name} \(", note), note
    second = _run(tmp_path, "print(ok)")
    assert second.stdout == "{'a': [1.5, None]}\n" and not any("--session" in n for n in second.notes), second.notes


def test_plain_keeps_plain_data_and_names_the_rest_in_the_runs_notes() -> None:
    from codeact.core import notices

    deep: Any = []
    for _ in range(sessions.MAX_DEPTH + 5):
        deep = [deep]
    notes = notices.Notes()
    previous = notes.activate()
    try:
        kept = sessions.plain({"a": 1, "t": (1, "x"), "deep": deep, sessions.OTHERS: [["s", "set"], ["f", "function"]]})
    finally:
        notices.restore(previous)
    assert kept == {"a": 1, "t": (1, "x")}
    assert len(notes.items) == 2  # the tuple kept as a list, and what was not kept
    assert "kept as lists" in notes.items[0] and ": t;" in notes.items[0]
    assert f"deep (nested deeper than {sessions.MAX_DEPTH} levels)" in notes.items[1]
    assert "s (a set)" in notes.items[1] and "f (" not in notes.items[1]


def test_a_large_list_in_a_session_comes_back_and_later_runs_still_start(tmp_path: Path) -> None:
    """A session's globals were given back as a program of literals, which the sandbox compiles in one statement:
    a list of 100,000 items ('function too large') made every later run of the session fail before its first
    line. They are bound as values now."""
    first = _run(tmp_path, "x = list(range(300_000))\ny = {'a': [1, 2.5, None, 'é'], 'b': {'c': True}}")
    assert first.error is None, first
    second = _run(tmp_path, "x.append(-1)\nprint(len(x), x[-2], y['a'][1] + 1, y['b'])")
    assert second.error is None and second.stdout.split("\n")[0] == "300001 299999 3.5 {'c': True}", second
    third = _run(tmp_path, "print(len(x), x[-1])")
    assert third.error is None and third.stdout.strip() == "300001 -1", third
