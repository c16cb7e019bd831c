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


# ------------------------------------------------------------ 2: xargs CMD, read as CMD with unknown arguments
_XARGS_ALLOWED = {
    "xargs -r npx prettier --write": "jq -r '.toolArgs.path // empty' | xargs -r npx prettier --write",
    "xargs -0 -n 1 black": "jq -j '.toolArgs.path' | xargs -0 -n 1 black -q",
    "xargs -I{} prettier --write {}": "jq -r .toolArgs.path | xargs -I{} npx prettier --write {}",
    "xargs sed -i script": "jq -r .toolArgs.path | xargs -r sed -i 's/ *$//'",
    "xargs, no command": "jq -r .toolArgs.path | xargs",
}


@pytest.mark.parametrize("form", sorted(_XARGS_ALLOWED))
def test_xargs_running_a_formatter_does_not_refuse_every_write(tmp_path: Path, form: str) -> None:
    """Any ``xargs`` made the hooks file Unread, so the most common formatter hook (``jq -r '.toolArgs.path //
    empty' | xargs -r npx prettier --write``) refused every write of the repository. xargs runs its command with
    the input as extra arguments: read as that command, those arguments not known."""
    out = _ordinary_edit(tmp_path, _XARGS_ALLOWED[form])
    assert "PermissionError" not in out, out


_XARGS_UNREAD = {
    "xargs sh": "jq -r .toolArgs.path | xargs sh",
    "xargs bash run.sh": "jq -r .toolArgs.path | xargs bash tools/run.sh",
    "xargs -I{} bash -c": "jq -r .toolArgs.path | xargs -I{} bash -c 'echo {}'",
    "xargs python3": "jq -r .toolArgs.path | xargs python3",
    "xargs -n1 perl": "jq -r .toolArgs.path | xargs -n1 perl",
    "xargs env sh": "jq -r .toolArgs.path | xargs env sh",
    "xargs -I% %": "jq -r .toolArgs.path | xargs -I% % --check",
    "xargs -i {} x": "jq -r .toolArgs.path | xargs -i {} x",
    "xargs $CMD": "jq -r .toolArgs.path | xargs $CMD",
    "xargs awk": "jq -r .toolArgs.path | xargs awk",
    "xargs sed -n": "jq -r .toolArgs.path | xargs sed -n",
    "xargs -a list sh": "xargs -a list sh",
    "xargs --max-args 1 sh": "jq -r .toolArgs.path | xargs --max-args 1 sh",
    "xargs xargs sh": "jq -r .toolArgs.path | xargs xargs sh",
    "xargs find -exec": "jq -r .toolArgs.path | xargs -I{} find {} -exec sh {} ;",
    "xargs npx": "jq -r .toolArgs.path | xargs npx",
    "xargs npx -y": "jq -r .toolArgs.path | xargs npx -y",
    "xargs -I{} npx {}": "jq -r .toolArgs.path | xargs -I{} npx {}",
    "xargs pnpm": "jq -r .toolArgs.path | xargs pnpm",
}


@pytest.mark.parametrize("form", sorted(_XARGS_UNREAD))
def test_xargs_running_code_it_reads_stays_unread(tmp_path: Path, form: str) -> None:
    """Where xargs' input becomes code (a shell's, an interpreter's, awk's program, the command itself with
    ``-I``) or its command is not known, the hooks file stays Unread: every write refused."""
    out = _ordinary_edit(tmp_path, _XARGS_UNREAD[form])
    assert out.split() == ["PermissionError"], out


def test_the_script_xargs_runs_is_protected(tmp_path: Path) -> None:
    """``xargs -r ./tools/fmt.sh``: the script xargs runs is the hook's, protected by its name."""
    out = _edit_planted(tmp_path, "jq -r .toolArgs.path | xargs -r ./tools/fmt.sh", {}, "tools/fmt.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 3: a pipe into an interpreter given its code
_PIPED_ALLOWED = {
    "bash -c text": "jq -r .toolArgs | bash -c 'read -r p; echo \"$p\" >> .hook.log'",
    "bash -o pipefail -c": "jq -r .toolArgs | bash -o pipefail -c 'cat > /dev/null'",
    "perl x.pl": "jq -r .toolArgs | perl tools/x.pl",
    "ruby x.rb": "jq -r .toolArgs | ruby -w tools/x.rb",
    "deno run x.ts": "jq -r .toolArgs | deno run -A tools/x.ts",
    "pwsh -File x.ps1": "jq -r .toolArgs | pwsh -NoProfile -File tools/x.ps1",
}


@pytest.mark.parametrize("form", sorted(_PIPED_ALLOWED))
def test_a_pipe_into_an_interpreter_given_its_code_does_not_refuse_every_write(tmp_path: Path, form: str) -> None:
    """A pipe into bash's ``-c`` text, or into perl, ruby, ``deno run``, ``pwsh -File`` given a script, was read as
    an interpreter reading its code from the pipe: every write refused. The pipe is data there (as for ``|
    python3 guard.py``)."""
    out = _ordinary_edit(tmp_path, _PIPED_ALLOWED[form])
    assert "PermissionError" not in out, out


_PIPED_UNREAD = {
    "bash -c 'sh'": "jq -r .toolArgs | bash -c 'sh'",
    "bash -c 'env python3'": "jq -r .toolArgs | bash -c 'env python3'",
    "bash -c 'source /dev/stdin'": "jq -r .toolArgs | bash -c 'source /dev/stdin'",
    "bash -s": "jq -r .toolArgs | bash -s",
    "perl -e": "jq -r .toolArgs | perl -e 'eval join \"\", <STDIN>'",
    "perl": "jq -r .toolArgs | perl",
    "ruby -": "jq -r .toolArgs | ruby -",
    "deno run -": "jq -r .toolArgs | deno run -",
    "pwsh -Command -": "jq -r .toolArgs | pwsh -Command -",
}


@pytest.mark.parametrize("form", sorted(_PIPED_UNREAD))
def test_a_pipe_into_an_interpreter_reading_its_code_there_stays_unread(tmp_path: Path, form: str) -> None:
    """Where the interpreter (or a command of bash's ``-c`` text) reads its code from the pipe, the hooks file
    stays Unread."""
    out = _ordinary_edit(tmp_path, _PIPED_UNREAD[form])
    assert out.split() == ["PermissionError"], out


def test_the_script_a_pipe_feeds_is_protected(tmp_path: Path) -> None:
    """``| perl tools/x.pl``: the script is the hook's, protected by its name."""
    out = _edit_planted(tmp_path, "jq -r .toolArgs | perl tools/x.pl", {}, "tools/x.pl")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 4, 5: awk's regular expressions, sed's labels
_FILTERS_THAT_RUN = {  # each reads the tool call's path, which the program chooses: `echo PLANTED`
    "awk: print /#/": "awk '{ print /#/; system($0) }'",
    "awk: 1. / 2": "awk '{ x = 1. / 2; system($0); y = 3 / 4 }'",
    "awk: a line continued": "awk '{ x = NR \\\n/ 2; system($0); y = 1 / 2 }'",
    "sed: a label ends at a space": "sed ':a e'",
    "sed: a branch's label ends at a space": "sed -e 'tx e' -e ':x'",
}


@pytest.mark.parametrize("form", sorted(_FILTERS_THAT_RUN))
def test_a_filter_whose_program_runs_commands_is_unread(tmp_path: Path, form: str) -> None:
    """``_awk_runs`` guessed a ``/`` after ``print``, after ``1.`` or after a line continuation wrong (a regex
    where awk divides, a division where it matches), so a ``#`` or a regex hid ``system(``; ``_SedScript`` read
    a label (``:a``, ``tx``) to the ``;``, where GNU sed ends it at white space, so ``:a e`` hid an ``e``
    command. mawk 1.3.4 and GNU sed 4.9 ran the tool call's path as a command: the hooks file must be Unread
    (every write refused)."""
    command = "jq -r .toolArgs.path | " + _FILTERS_THAT_RUN[form]
    out = _ordinary_edit(tmp_path, command)
    if out.split() != ["PermissionError"] and shutil.which("jq"):
        done = subprocess.run(["bash", "-c", command], input='{"toolArgs": {"path": "echo PLANTED"}}',
                              capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
        assert "PLANTED" in done.stdout, (out, done.stderr)
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize("command", ["awk '{print $1 \"|\" $2}'", "awk '/a|b/ { print $1 / 2 }'",
                                     "sed 's/ *$//'", "sed -e ':a' -e 'N;$!ba' -e 's/\\n/ /g'"])
def test_ordinary_filters_do_not_refuse_every_write(tmp_path: Path, command: str) -> None:
    """Ordinary filters stay data."""
    out = _ordinary_edit(tmp_path, "jq -r .toolArgs.path | " + command)
    assert "PermissionError" not in out, out


# ------------------------------------------------------------ 6: a script the hook writes itself
_WRITES_THEN_RUNS = {
    "sort -o": "mkdir -p build; cat $(find parts -type f) | sort -o build/run.sh; bash build/run.sh",
    "sort --output=": "mkdir -p build; cat $(find parts -type f) | sort --output=build/run.sh; bash build/run.sh",
    "sed w": "mkdir -p build; cat $(find parts -type f) | sed -n 'w build/run.sh'; bash build/run.sh",
    "awk print >": "mkdir -p build; cat $(find parts -type f) | awk '{ print > \"build/run.sh\" }'; bash build/run.sh",
    "split": "mkdir -p build; cat $(find parts -type f) | split -l 1000 - build/run; bash build/runaa",
}


@pytest.mark.parametrize("form", sorted(_WRITES_THEN_RUNS))
def test_a_script_the_hook_writes_with_a_tool_is_unread(tmp_path: Path, form: str) -> None:
    """``_written`` knew redirections, tee, cp, mv, install, ln, rsync, dd and find's ``-fprint*`` only: ``sort
    -o``, sed's ``w``, awk's ``print > "x"``, ``split`` (and ``csplit``, ``tar -x``, ``unzip``, ``patch``, ``curl
    -o``, ``wget -O``) wrote the script the hook then runs from a file the program creates (``parts/evil``):
    bash ran it. A program's write of ``parts/evil`` must be refused (the hooks file is Unread)."""
    command = _WRITES_THEN_RUNS[form]
    base, ws = _workspace(tmp_path, command, {"parts/evil": "exit 0\n"})
    out = edit_output(ws, base, "parts/evil", "exit 0", "echo PLANTED")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"], out
