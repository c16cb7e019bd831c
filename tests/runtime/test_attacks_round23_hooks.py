"""Red team, round 23 (report-only, on round 22's fixes): a jq comment that hides the ``| length`` a count needs,
and ``python -c`` data code whose modules evaluate text (``typing.get_type_hints`` of a string annotation). The
text reaches the host on the hook's stdin (the tool call's payload) or from a file; either way the hook runs it, so
the hooks file must be Unread."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import protected

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_FILES = {"src/app.ts": "export {}\n"}
_COMMENTED_COUNTS = [
    "x=$(jq -r '.toolName # | length'); echo $(( x ))",
    "x=$(cat d.json | jq -r '. as $v | $v # | length'); [[ $x -gt 3 ]]",
]
_EVALUATING_CODE = [
    "jq -r .toolArgs | python3 -c 'import sys,typing,dataclasses; typing.get_type_hints(dataclasses.make_dataclass("
    "\"X\",[(\"a\",sys.stdin.read())]))'",
    "cat | python3 -c 'import sys, typing; typing.ForwardRef(sys.stdin.read())'",
]


@pytest.mark.parametrize("command", _COMMENTED_COUNTS + _EVALUATING_CODE)
def test_text_a_hook_evaluates_makes_its_file_unread(tmp_path: Path, command: str) -> None:
    """jq's ``#`` starts a comment, so ``'.toolName # | length'`` prints the name, not a number, and bash's
    arithmetic runs a ``a[$(cmd)]`` in it (bash 5.2 and jq 1.6 ran it); ``typing`` and ``dataclasses`` turn a
    string into an annotation that ``get_type_hints`` evaluates (python 3.11 ran it). Fixed: no ``#`` in a counting
    filter; neither module is a data module. Every write is refused (an ordinary file's too)."""
    assert protected(tmp_path, command, "src/app.ts", _FILES)


@pytest.mark.parametrize("command", [
    "n=$(jq '.toolArgs | length'); [[ $n -gt 10 ]] && exit 2; exit 0",
    "jq -c . | python3 -c 'import json, sys, collections; print(collections.Counter(json.load(sys.stdin)))'",
])
def test_the_ordinary_forms_stay_readable(tmp_path: Path, command: str) -> None:
    """A count without a comment and ``python -c`` with data modules still leave an ordinary file writable."""
    assert not protected(tmp_path, command, "src/app.ts", _FILES)
