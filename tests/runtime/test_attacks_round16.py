"""Red team, round 16 (issue 40; report-only, the lead turned its findings into tests): what the last fixes left.
Each test runs a program through the sandbox (``run``, monty)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round12_redteam import _edit_hook_target

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")


_FILTER_RUNS = {  # a text filter whose program runs a command built from what it reads
    "awk system()": ({"bash": "find impl -name run.sh | awk '{system(\"bash \" $0)}'"}, "impl/run.sh"),
    "awk system() on ls": ({"bash": "ls impl | awk '{system(\"sh impl/\" $1)}'"}, "impl/run.sh"),
    "sed s///e": ({"bash": "find impl -name run.sh | sed 's/^/bash /e'"}, "impl/run.sh"),
    "sed e command": ({"bash": "find impl -name run.sh | sed -e 's/^/sh /' -e e"}, "impl/run.sh"),
}


@pytest.mark.parametrize("form", sorted(_FILTER_RUNS))
def test_a_hook_script_a_text_filter_runs_is_protected(tmp_path: Path, form: str) -> None:
    """c3c943b reads a pipe into awk as data (``jq -r .toolName | awk '{print $1}'``, a common hook). But awk's
    ``system()`` (``getline`` from a command, ``print | "cmd"``) and GNU sed's ``e`` command or ``s///e`` flag run
    a command built from the text: ``find impl -name run.sh | awk '{system("bash " $0)}'`` ran the program's
    ``impl/run.sh`` (checked with bash, awk and GNU sed). Such a program makes the hooks file one past what
    CodeAct reads; a plain filter stays data."""
    entry, target = _FILTER_RUNS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


def test_a_plain_text_filter_in_a_hook_leaves_the_repository_writable(tmp_path: Path) -> None:
    """The same hooks without a command in the filter's program: nothing but what they name is refused."""
    out = _edit_hook_target(tmp_path, {"bash": "jq -r .toolName | awk '{print $1}' | sed 's/e/E/' >> log.txt"},
                            "impl/run.sh")
    assert out.split() != ["PermissionError"], out


@pytest.mark.parametrize("command", ["npm install", "npm ci", "npm i ./impl", "pnpm install"])
def test_a_workspace_package_json_an_install_runs_is_protected(tmp_path: Path, command: str) -> None:
    """npm's install (``ci``, ``i ./folder``; pnpm's, yarn's) runs the lifecycle scripts of every workspace package
    and every local ``file:`` dependency, not only the root's: with ``"workspaces": ["impl"]`` a hook's ``npm
    install`` ran ``impl/package.json``'s ``postinstall`` (checked with npm 11.19, offline). Every package.json
    below the folder is read as the install's."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "impl/package.json")
    assert out.split() == ["PermissionError"], out
