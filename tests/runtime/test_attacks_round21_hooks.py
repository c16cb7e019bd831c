"""Red team, round 21 part A (report-only): hook commands whose newlines, allowlisted pipe readers, arithmetic,
xargs commands, implicitly set variables, wrapped runs of a copied script and PowerShell pipes hookruns misreads,
so a program's write reaches what the hook runs on the host. Each finding's test runs a program through the
sandbox and fails while the finding is open; where the real tool is on this machine, the test runs the hook's
command with it and asserts that it ran the planted text when the sandbox's write went through. The last test
holds ordinary hooks the allowlist of 4ea66d8 now refuses (false positives): it fails while they are refused."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import edit_output, git_workspace, hooks_json, proved_edit

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_PLANT = "echo PLAN''TED"  # prints PLANTED only where a shell runs it
_DATA = "find tools -name '*.txt' | xargs cat"  # tools/a.txt's text, a file named by no word


def _workspace(tmp_path: Path, entry: dict[str, object], files: dict[str, str]) -> tuple[Path, Path]:
    """A repository whose ``.github/hooks/policy.json`` runs the command ``entry`` at preToolUse, holding ``files``."""
    base, ws = git_workspace(tmp_path, ".github/hooks")
    (ws / ".github/hooks/policy.json").write_text(hooks_json({"type": "command", **entry}))
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return base, ws




# ------------------------------------------------------------ 1: a newline is no command separator to the reader
_NEWLINE = {
    "substitution at a command's place": (f"true\n$({_DATA})", "tools/a.txt"),
    "eval of a substitution": (f"echo start\neval \"$({_DATA})\"", "tools/a.txt"),
    "a comment's quote hides a pipe into sh": (f"# it's the policy\n{_DATA} | sh # that's all", "tools/a.txt"),
    "tee then run": (f"{_DATA} | tee build.sh > /dev/null\nbash build.sh", "tools/a.txt"),
    "sh -c text on lines": ("sh -c $'true\\n$(find tools -name \\*.txt | xargs cat)'", "tools/a.txt"),
    "cp -r then run": ("mkdir -p build\ncp -r parts/. build/\nbash build/run.sh", "parts/run.sh"),
    "ln -sfn then run": ("ln -sfn parts build\nbash build/run.sh", "parts/run.sh"),
}


@pytest.mark.parametrize("form", sorted(_NEWLINE))
def test_newline_separates_commands(tmp_path: Path, form: str) -> None:
    """``true⏎$(find tools -name '*.txt' | xargs cat)``: shell_words splits with shlex, for which a newline is
    white space, so the second line's words are read as arguments of the first command: a substitution at a
    command's place, ``eval``, a pipe into ``sh`` (a comment's apostrophe, which bash ignores, opens a quote for
    shlex that swallows the pipe), a ``tee`` then a run, and a copy then a run in one _segments segment (whose
    run is skipped as the copier's own) all pass. bash 5 ran the planted text."""
    command, target = _NEWLINE[form]
    files = {"tools/a.txt": "true\n", "parts/run.sh": "true\n"}
    plant = "printf %s%s PLAN TED" if "$(" in command and "eval" not in command else _PLANT  # split, no quotes
    out = proved_edit(tmp_path, {"bash": command}, files, target, "true", plant)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 2: allowlisted pipe readers that run code
_DATA_RUNS = {
    "mapfile -C eval": (f"{_DATA} | mapfile -t -C eval -c 1 L", f"x;{_PLANT}"),
    "readarray -C eval": (f"{_DATA} | readarray -C eval -c 1 L", f"x;{_PLANT}"),
    "sort --co=sh": (f"{_DATA} | sort -S 1K --co=sh", f"{_PLANT} >&2\n" * 200),
    "sort --co sh": (f"{_DATA} | sort -S1K --co sh", f"{_PLANT} >&2\n" * 200),
}


@pytest.mark.parametrize("form", sorted(_DATA_RUNS))
def test_allowlisted_pipe_reader_runs_code(tmp_path: Path, form: str) -> None:
    """``... | mapfile -C eval -c 1 L``: mapfile and readarray are in _STDIN_DATA, but ``-C`` evaluates its
    callback with each line (``eval 0 'x;cmd'`` runs ``cmd``); sort's ``--compress-program`` is caught by the
    ``--com`` prefix only, while GNU getopt takes ``--co`` (unambiguous) and runs ``sh`` with the spilled lines
    as its script (``-S 1K``: 100 lines spill). bash 5 and coreutils 9.1 ran the planted text."""
    command, new = _DATA_RUNS[form]
    out = proved_edit(tmp_path, {"bash": command}, {"tools/a.txt": "true\n"}, "tools/a.txt", "true", new)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 3: data read into arithmetic
_ARITHMETIC = {
    "[[ $n -gt 3 ]]": f"{_DATA} | {{ read -r n; [[ $n -gt 3 ]]; }}",
    "[[ -v $n ]]": f"{_DATA} | {{ read -r n; [[ -v $n ]]; }}",
    "test -v": f"{_DATA} | {{ read -r n; test -v \"$n\"; }}",
    "printf -v": f"{_DATA} | {{ read -r n; printf -v \"$n\" x; }}",
    "declare -i": f"{_DATA} | {{ read -r n; declare -i x=$n; }}",
    "n=$(...); [[ $n -gt 3 ]]": f"n=$({_DATA}); [[ $n -gt 3 ]]",
}


@pytest.mark.parametrize("form", sorted(_ARITHMETIC))
def test_data_read_into_arithmetic_runs_code(tmp_path: Path, form: str) -> None:
    """``... | { read -r n; [[ $n -gt 3 ]]; }``: every command is allowlisted (read, ``[[``) and ``$n`` is an
    argument, but bash evaluates ``[[``'s ``-gt`` operands, ``-v``'s subscript, ``printf -v``'s and ``declare
    -i``'s as arithmetic, where ``a[$(cmd)]`` runs ``cmd``: the text of tools/a.txt (named by no word) runs. bash 5
    ran the planted text."""
    new = f"a[$({_PLANT} >&2)]"
    out = proved_edit(tmp_path, {"bash": _ARITHMETIC[form]}, {"tools/a.txt": "0\n"}, "tools/a.txt", "0", new)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 4: xargs' command is still a denylist
_XARGS = {
    "rbash": ("rbash", "true\n", _PLANT),
    "flock l bash": ("flock /tmp/rt21a-hook.lock bash", "true\n", _PLANT),
    "taskset 1 bash": ("taskset 1 bash", "true\n", _PLANT),
    "setpriv bash": ("setpriv bash", "true\n", _PLANT),
    "unshare bash": ("unshare bash", "true\n", _PLANT),
    "make -f": ("make -f", "all:\n\t@true\n", _PLANT),
    "awk -f": ("awk -f", 'BEGIN { system("true") }\n', _PLANT),
}


@pytest.mark.parametrize("form", sorted(_XARGS))
def test_xargs_command_that_runs_its_input(tmp_path: Path, form: str) -> None:
    """``find tools -name '*.txt' | xargs rbash``: _check_xargs refuses the shells, interpreters and wrappers it
    lists, the denylist round 20 showed incomplete for pipes (``rbash``, ``flock``, ``taskset``, ``setpriv``,
    ``unshare``...), and awk or make whose program is the input file (``awk -f``, ``make -f``: the option is
    there, its value is what xargs appends). tools/a.txt (named by no word) runs. bash 5, util-linux, GNU make
    and mawk ran the planted text."""
    command, text, new = _XARGS[form]
    entry = {"bash": f"find tools -name '*.txt' | xargs {command}"}
    out = proved_edit(tmp_path, entry, {"tools/a.txt": text}, "tools/a.txt", "true", new, command.split()[0])
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 5: a variable set by a word that does not name it
_IMPLICIT = {
    "read sets REPLY": "REPLY=guard; read -r < tools/name; bash tools/$REPLY.sh",
    "mapfile sets MAPFILE": "MAPFILE=guard; mapfile -t < tools/name; bash tools/$MAPFILE.sh",
    "getopts sets OPTARG": "OPTARG=guard; getopts a: o -a evil; bash tools/$OPTARG.sh",
    "read -r $X'T'": "T=guard; X=; read -r $X'T' < tools/name; bash tools/$T.sh",
    "printf -v $X'T'": "T=guard; X=; printf -v $X'T' %s evil; bash tools/$T.sh",
    "declare $X'T'=evil": "T=guard; X=; declare $X'T'=evil; bash tools/$T.sh",
    "eval $X'T'=evil": "T=guard; X=; eval $X'T'=evil; bash tools/$T.sh",
}


@pytest.mark.parametrize("form", sorted(_IMPLICIT))
def test_variable_set_without_its_name_is_not_its_literal(tmp_path: Path, form: str) -> None:
    """``REPLY=guard; read -r < tools/name; bash tools/$REPLY.sh``: _known_names counts the words naming a
    variable, but ``read`` with no name sets ``REPLY``, ``mapfile`` ``MAPFILE``, ``getopts`` ``OPTARG``; and
    shlex joins ``$X'T'`` into ``$XT`` (bash: ``$X`` then ``T``), so ``read -r $X'T'``, ``printf -v``,
    ``declare`` and ``eval`` set ``T`` unseen. The hook is read as running ``tools/guard.sh`` while bash runs
    ``tools/evil.sh``, which stays writable. bash 5 ran the planted text."""
    files = {"tools/name": "evil\n", "tools/guard.sh": "exit 0\n", "tools/evil.sh": "exit 0\n"}
    out = proved_edit(tmp_path, {"bash": _IMPLICIT[form]}, files, "tools/evil.sh", "exit 0", _PLANT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 6: a copied script run behind a wrapper or runner
_COPY_RUNS = {
    "timeout 5 bash": ("cp -a parts/. build && timeout 5 bash build/run.sh", "parts/run.sh", "bash"),
    "env bash": ("cp -a parts/. build && env bash build/run.sh", "parts/run.sh", "bash"),
    "nice bash": ("cp -a parts/. build && nice bash build/run.sh", "parts/run.sh", "bash"),
    "exec bash": ("cp -a parts/. build; exec bash build/run.sh", "parts/run.sh", "bash"),
    "command bash": ("cp -a parts/. build; command bash build/run.sh", "parts/run.sh", "bash"),
    "bash -o pipefail": ("cp -a parts/. build; bash -o pipefail build/run.sh", "parts/run.sh", "bash"),
    "for over build/*.sh": ('cp -a parts/. build && for f in build/*.sh; do bash "$f"; done', "parts/run.sh",
                            "bash"),
    "bash -c 'bash build/run.sh'": ("cp -a parts/. build && bash -c 'bash build/run.sh'", "parts/run.sh", "bash"),
    "make -C build": ("cp -a parts/. build && make -C build", "parts/Makefile", "make"),
    "python3 -m build.run": ("cp -a parts/. build && python3 -m build.run", "parts/run.py", "python3"),
}


@pytest.mark.parametrize("form", sorted(_COPY_RUNS))
def test_copied_script_run_behind_a_wrapper_is_protected(tmp_path: Path, form: str) -> None:
    """``cp -a parts/. build && timeout 5 bash build/run.sh``: _script_runs takes the command word past
    assignments only, so a wrapper (``timeout``, ``env``, ``nice``, ``exec``, ``command``) hides the interpreter;
    it takes an option's value as the script (``bash -o pipefail x``: ``pipefail``); a loop's variable, a run in
    ``-c`` text (read apart from the copy), and what a runner reads (``make -C build``: build/Makefile,
    ``python3 -m build.run``) are no script run. parts/ stays writable and its text runs. bash 5, GNU make and
    python 3 ran the planted text."""
    command, target, tool = _COPY_RUNS[form]
    files = {"parts/run.sh": "true\n", "parts/Makefile": "all:\n\t@true\n", "parts/run.py": "True\n"}
    new = "print('PLAN' 'TED')" if target.endswith(".py") else _PLANT
    old = "True" if target.endswith(".py") else "true"
    out = proved_edit(tmp_path, {"bash": command}, files, target, old, new, tool)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 7: PowerShell's pipes are never seen
_POWERSHELL = {
    "Invoke-Expression": "Get-ChildItem tools -Filter *.txt | Get-Content | Invoke-Expression",
    "iex": "Get-ChildItem tools -Filter *.txt | Get-Content -Raw | iex",
    "python -": "Get-ChildItem tools -Filter *.txt | Get-Content | python -",
    "bash": "Get-ChildItem tools -Filter *.txt | Get-Content | bash",
}


@pytest.mark.parametrize("form", sorted(_POWERSHELL))
def test_powershell_pipe_into_code_reader_is_unread(tmp_path: Path, form: str) -> None:
    """``"powershell": "Get-ChildItem tools -Filter *.txt | Get-Content | Invoke-Expression"``: windows_words
    trims ``|`` from every word and drops the empty ones, so _runner_files' check of a pipe's reader never sees a
    ``|``; _check_commands is not run for PowerShell's keys at all, and ``iex``/``Invoke-Expression`` are in no
    list. tools/a.txt (named by no word) is run as PowerShell (or python, bash) on Windows. No pwsh here: not run."""
    entry = {"powershell": _POWERSHELL[form]}
    out = proved_edit(tmp_path, entry, {"tools/a.txt": "Write-Output ok\n"}, "tools/a.txt", "Write-Output ok", _PLANT,
                "pwsh")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ false positives: ordinary hooks now refused
_ORDINARY = {
    "uv run a script": "cat | uv run scripts/guard.py",
    "python3 -m a module": "cat | python3 -m scripts.guard",
    "timeout around the repo's script": "cat | timeout 10 ./scripts/guard.sh",
    "bun run a file": "cat | bun run scripts/guard.ts",
    "go run": "cat | go run ./cmd/guard",
    "shellcheck in a read loop": 'git diff --name-only | while read -r f; do shellcheck "$f"; done',
    "prettier reading stdin": "jq -r .toolArgs.content | npx prettier --stdin-filepath x.ts --check",
    "nice jq": "jq -r .toolArgs | nice jq .",
}


@pytest.mark.parametrize("form", sorted(_ORDINARY))
def test_ordinary_piped_hook_leaves_source_writable(tmp_path: Path, form: str) -> None:
    """``cat | uv run scripts/guard.py`` (``python3 -m scripts.guard``, ``timeout 10 ./scripts/guard.sh``, ``bun
    run``, ``go run``, ``shellcheck`` or ``npx prettier --stdin-filepath`` fed by a pipe, ``nice jq``): each
    reads the payload as data and runs a file of the repository the reader could protect, but the allowlist does
    not know the runner, so the whole hooks file is Unread and every write is refused: src/app.ts too."""
    files = {"scripts/guard.py": "pass\n", "scripts/guard.sh": "exit 0\n", "scripts/guard.ts": "export {}\n",
             "cmd/guard/main.go": "package main\nfunc main() {}\n", "src/app.ts": "export const a = 1;\n"}
    base, ws = _workspace(tmp_path, {"bash": _ORDINARY[form]}, files)
    out = edit_output(ws, base, "src/app.ts", "a = 1", "a = 2")
    assert "PermissionError" not in out, out
