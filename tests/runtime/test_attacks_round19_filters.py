"""Red team, round 19 (report-only; checked with mawk 1.3.4, GNU sed 4.9, bash 5.2): hookruns' reading of
variables set from an unquoted command substitution, of ``xargs CMD``, of pipes into an interpreter given a script
or a ``-c`` text, of awk's regular expressions and sed's labels. A breach is a test that the program's write is
refused (where it goes through, the test runs the hook with the real bash and asserts that it ran the planted
text); a false positive is a test that the ordinary write succeeds."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from attack_helpers import edit_output, hooked_workspace

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_INPUT = '{"toolName": "edit", "toolArgs": {"path": "src/app.py"}}'


def _workspace(tmp_path: Path, command: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A repository whose ``.github/hooks/policy.json`` runs the bash ``command`` at preToolUse, holding ``files``."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": command}])
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return base, ws


def _host_runs_planted(ws: Path, command: str) -> bool:
    """Whether the hook ``command``, run by the real bash in ``ws`` with a tool call's JSON on stdin, prints
    ``PLANTED``."""
    done = subprocess.run(["bash", "-c", command], cwd=ws, input=_INPUT, capture_output=True, text=True,
                          timeout=60, check=False)
    return "PLANTED" in done.stdout


def _edit_planted(tmp_path: Path, command: str, files: dict[str, str], target: str) -> str:
    """A program edits ``target`` (``exit 0``) to print ``PLANTED``: its output; where the edit goes through and
    the tools are here, the real bash must have run the planted text."""
    base, ws = _workspace(tmp_path, command, {**files, target: "exit 0\n"})
    (ws / target).chmod(0o755)
    out = edit_output(ws, base, target, "exit 0", "echo PLANTED")
    if out.split() != ["PermissionError"] and shutil.which("jq"):
        assert _host_runs_planted(ws, command), out
    return out


def _ordinary_edit(tmp_path: Path, command: str, files: dict[str, str] | None = None) -> str:
    """A program edits ``src/app.py`` (no script of the hook): its output."""
    base, ws = _workspace(tmp_path, command, {**(files or {}), "src/app.py": "exit 0\n"})
    return edit_output(ws, base, "src/app.py")


# ------------------------------------------------------------ 1: a variable set from an unquoted $(...)
_SUBSTITUTED = {
    "T=$(...)": 'T=$(jq -r .toolName); bash "tools/$T.sh"',
    "export T=$(...)": 'export T=$(jq -r .toolName); bash "tools/$T.sh"',
    "${T}": 'T=$(jq -r .toolName); bash "tools/${T}.sh"',
    "./tools/$T.sh": 'T=$(jq -r .toolName); ./tools/$T.sh',
    "INPUT then TOOL": 'INPUT=$(cat); TOOL=$(echo "$INPUT" | jq -r .toolName); bash "tools/$TOOL.sh"',
    "backticks": 'T=`jq -r .toolName`; bash "tools/$T.sh"',
}


@pytest.mark.parametrize("form", sorted(_SUBSTITUTED))
def test_a_variable_set_from_an_unquoted_substitution_is_not_known(tmp_path: Path, form: str) -> None:
    """shlex (punctuation_chars) splits ``T=$(jq -r .toolName)`` into ``T=$``, ``(``, ...: ``_assigned`` took T
    as ``$`` and read ``tools/$T.sh`` as ``tools/$.sh``, a file that is not there, so ``tools/edit.sh`` stayed
    writable and bash ran the program's text (the quoted ``T="$(...)"`` was Unread already)."""
    out = _edit_planted(tmp_path, _SUBSTITUTED[form], {}, "tools/edit.sh")
    assert out.split() == ["PermissionError"], out
