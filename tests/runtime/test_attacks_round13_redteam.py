"""Red team, round 13 (issue 40): what 087fa38, 706d54b, a9d7d66, 20b6664, 5c4b0e9, 0ea18bb, da4ade6, d1fc272,
1362ab9 and 1e21d98 left open. Each test runs a program through the sandbox (``run``, monty) and fails while the
breach is open (strict xfail)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round12_redteam import _edit_hook_target, _encoded, _write_text_makes_folders

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")


_REASON = "open (issue 40, red team round 13): {}"


# ------------------------------------------------------------ 087fa38: variables it does not list
_VARIABLE_FORMS = {  # a hook entry whose variables make bash or python run a file the boundary leaves writable
    "BASH_FUNC_npm%% (an exported function)": (
        {"bash": "npm run lint", "env": {"BASH_FUNC_npm%%": "() { . impl/run.sh; }"}}, "impl/run.sh"),
    "printf -v BASH_ENV": ({"bash": "printf -v BASH_ENV %s/run.sh impl; export BASH_ENV; bash -c true"},
                           "impl/run.sh"),
    "PYTHONWARNINGS (imports the category's module)": (
        {"bash": "python3 -m json.tool package.json", "env": {"PYTHONPATH": ".", "PYTHONWARNINGS": "ignore::evil.W"}},
        "evil.py"),
    "python3 -W (imports the category's module)": (
        {"bash": "PYTHONPATH=. python3 -W ignore::evil.W -m json.tool package.json"}, "evil.py"),
    "PowerShell $env:BASH_ENV": ({"powershell": "$env:BASH_ENV = 'impl' + '/run.sh'; bash -c true"}, "impl/run.sh"),
    "PowerShell $env:npm_config_workspace": ({"powershell": "$env:npm_config_workspace = 'impl'; npm run lint"},
                                             "impl/package.json"),
    "BASH_ENV as a JSON number (node makes it '1')": ({"bash": "echo ok", "env": {"BASH_ENV": 1}}, "1"),
    "GIT_EXTERNAL_DIFF (git diff runs it)": ({"bash": "git diff", "env": {"GIT_EXTERNAL_DIFF": "impl/d.sh"}},
                                             "impl/d.sh"),
}


@pytest.mark.parametrize("form", sorted(_VARIABLE_FORMS))
def test_a_file_a_variable_087fa38_does_not_list_makes_the_hook_run_is_protected(tmp_path: Path, form: str) -> None:
    """UNFOLLOWED_VARIABLES makes a hooks file Unread when its entry sets BASH_ENV, NODE_OPTIONS... by ``env`` or a
    ``VAR=`` word. Not listed: ``BASH_FUNC_<name>%%`` -- bash defines an exported function from it, so
    ``{"bash": "npm run lint", "env": {"BASH_FUNC_npm%%": "() { . impl/run.sh; }"}}`` runs ``impl/run.sh`` in
    place of npm (checked: ``env 'BASH_FUNC_npm%%=() { . impl/run.sh; }' bash -c 'npm run lint'`` sources it);
    a variable set by no ``VAR=`` word (``printf -v BASH_ENV %s/run.sh impl; export BASH_ENV; bash -c true``:
    the child bash sources ``impl/run.sh``; and PowerShell's ``$env:BASH_ENV = 'impl' + '/run.sh'`` or
    ``$env:npm_config_workspace = 'impl'; npm run lint``, which no rule reads as an assignment); git's own
    commands (``GIT_EXTERNAL_DIFF=impl/d.sh`` with ``git diff``: checked, it runs ``impl/d.sh`` from the
    worktree's top; ``GIT_PAGER``, ``GIT_EDITOR``, ``GIT_ASKPASS``, ``GIT_PROXY_COMMAND`` likewise); an env
    value that is not a string (``{"BASH_ENV": 1}``: 087fa38 checks only str-to-str pairs, while node's spawn
    makes it ``"1"`` and bash sources ``./1``, checked with child_process.spawnSync -- if the CLI passes ``env``
    on unvalidated); and
    Python's warning filters (``PYTHONWARNINGS`` or ``-W ignore::evil.W``, with ``PYTHONPATH=.``): Python
    imports the category's module
    ``evil`` at start-up, though json.tool is the standard library's (checked on 3.11). Each file stays writable:
    ``edit()`` succeeds and the CLI runs the program's text on the host at the next tool call (host code
    execution). Fix: treat ``BASH_FUNC_*`` (any name with ``%%``, any env name that is not a plain identifier) and
    ``PYTHONWARNINGS``, ``GIT_*`` commands as unfollowed (names of any value type), and ``-W``/``-X`` arguments
    naming a module as Python's; make ``printf -v``, ``read``, ``declare``/``typeset``/``export``/``local`` of an
    unfollowed name Unread (the name, not an assignment word, is what counts), and PowerShell's ``$env:NAME``
    (``Set-Item env:``, ``[Environment]::SetEnvironmentVariable``) the same way."""
    entry, target = _VARIABLE_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 706d54b: runners of what they find or decode
_INDIRECT_FORMS = {  # a hook entry that runs impl/run.sh (.ps1) through a command _INDIRECT does not hold
    "fd -x (find's -exec, fd-find)": ({"bash": "fd run.sh impl -x sh"}, "impl/run.sh"),
    "find | sh (find's output run as commands)": ({"bash": "find impl -name run.sh | sh"}, "impl/run.sh"),
    "Get-ChildItem | ForEach-Object (PowerShell's find -exec)": (
        {"powershell": "Get-ChildItem impl -Filter run.ps1 | ForEach-Object { & $_.FullName }"}, "impl/run.ps1"),
    "gfind -exec (GNU find's name on macOS)": ({"bash": "gfind impl -name run.sh -exec sh {} \\;"}, "impl/run.sh"),
    "pwsh --EncodedCommand": ({"powershell": f"pwsh -NoProfile --EncodedCommand {_encoded('& ./impl/run.ps1')}"},
                              "impl/run.ps1"),
    "pwsh \u2013EncodedCommand (en dash)": (
        {"powershell": f"pwsh -NoProfile \u2013EncodedCommand {_encoded('& ./impl/run.ps1')}"}, "impl/run.ps1"),
}


@pytest.mark.parametrize("form", sorted(_INDIRECT_FORMS))
def test_a_hook_script_run_by_fd_or_a_dashed_encoded_command_is_protected(tmp_path: Path, form: str) -> None:
    """706d54b makes ``find -exec``, ``xargs`` and ``pwsh -EncodedCommand`` (its abbreviations, ``-`` or ``/``)
    Unread. pwsh 7's parser strips a second dash and takes any Unicode dash (CharExtensions.IsDash: en dash, em
    dash, horizontal bar) as ``-``: ``--EncodedCommand`` and ``\u2013EncodedCommand`` run the hidden
    ``& ./impl/run.ps1`` and are not in ``_ENCODED``. fd (fd-find, ``fdfind`` on Debian) runs what it finds with
    ``-x``/``--exec``/``-X``/``--exec-batch``: ``fd run.sh impl -x sh`` runs ``impl/run.sh`` and names only
    ``run.sh`` (read from the cwd); ``gfind`` (GNU find as Homebrew installs it) and ``gxargs`` are not in
    ``_INDIRECT`` either; and ``find impl -name run.sh | sh`` runs each path find prints as a command, with no
    ``-exec``, no variable and no substitution (``find ... | while read -r f; do sh "$f"; done``, the common
    idiom, likewise, through a variable; and PowerShell's own form, ``Get-ChildItem impl -Filter run.ps1 |
    ForEach-Object { & $_.FullName }``). Each file stays writable: ``edit()`` succeeds and the CLI runs the program's
    text on the host at the next tool call (host code execution). Fix: normalise PowerShell flags (strip ``/``,
    any leading run of Unicode dashes, case) before matching ``_ENCODED``; add ``fd``/``fdfind`` (``-x``, ``-X``,
    ``--exec``, ``--exec-batch``), ``gfind``/``gxargs``, any ``find`` whose output a pipe reads,
    ``Get-ChildItem``/``gci``/``ls``/``dir`` piped to ``ForEach-Object``/``%`` that runs ``$_``, and similar
    runners (``parallel``, ``watchexec``, ``entr``) to ``_INDIRECT``."""
    entry, target = _INDIRECT_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


def test_a_git_hook_a_hook_commands_git_c_names_is_protected(tmp_path: Path) -> None:
    """087fa38 makes ``GIT_CONFIG*`` (git configuration by the environment) Unread, but not the same by git's own
    ``-c``: ``{"bash": "git -c core.hooksPath=impl commit -q --allow-empty -m x"}`` runs ``impl/pre-commit``
    (checked: from the worktree's top, whatever the cwd), a word no rule reads (``core.hooksPath=impl`` is
    neither a path nor an assignment). ``impl/pre-commit`` stays writable: ``edit()`` succeeds and the next
    hook's commit runs the program's text on the host (host code execution; ``core.fsmonitor=``,
    ``core.sshCommand=``, ``alias.x=!...`` and ``include.path=`` likewise). Fix: make a ``git -c``/``--config-env``
    (and ``-c`` joined) that sets a key running or including a file -- or any ``git -c`` -- Unread, as
    ``GIT_CONFIG*`` is."""
    out = _edit_hook_target(tmp_path, {"bash": "git -c core.hooksPath=impl commit -q --allow-empty -m x"},
                            "impl/pre-commit")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ _bases: folders cd reaches that no word names
_CD_FORMS = {  # a hook entry that changes to impl (or impl/sub) with no word naming it from the cwd
    "cd - (OLDPWD from env)": ({"bash": "cd - && ./run.sh", "env": {"OLDPWD": "impl"}}, "impl/run.sh"),
    "OLDPWD=impl; cd -": ({"bash": "OLDPWD=impl; cd - && ./run.sh"}, "impl/run.sh"),
    "cd ~- (OLDPWD from env)": ({"bash": "cd ~- && ./run.sh", "env": {"OLDPWD": "impl"}}, "impl/run.sh"),
    "cd impl && cd sub (relative to the first)": ({"bash": "cd impl && cd sub && ./run.sh"}, "impl/sub/run.sh"),
    "pushd impl && pushd sub": ({"bash": "pushd impl && pushd sub && ./run.sh"}, "impl/sub/run.sh"),
}


@pytest.mark.parametrize("form", sorted(_CD_FORMS))
def test_a_hook_script_run_after_cd_minus_or_a_second_cd_is_protected(tmp_path: Path, form: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``_bases`` reads each ``cd`` word from the entry's cwd. ``cd -`` and ``cd ~-`` go to ``$OLDPWD``, which bash
    takes from the environment (an entry's ``env``) or a plain ``OLDPWD=impl`` (checked: ``OLDPWD=impl bash -c
    'cd ~- && pwd'``); ``-`` is skipped as an option and ``~-`` read as a folder of that name, and OLDPWD is not
    in UNFOLLOWED_VARIABLES. And ``cd impl && cd sub`` is in ``impl/sub``, but ``sub`` is read from the cwd, not
    from ``impl``: ``impl/sub/run.sh`` stays writable. ``edit()`` succeeds and the CLI runs the program's text on
    the host at the next tool call (host code execution). Fix: add OLDPWD (and ``cd -``/``~-``/``~+`` without
    one) to what makes a hooks file Unread; read a relative ``cd`` from each base the earlier ones reached (or
    make a second ``cd`` Unread)."""
    entry, target = _CD_FORMS[form]
    if "/sub/" in target:  # the helper writes impl/sub/run.sh: its folder made first
        _write_text_makes_folders(monkeypatch, "run.sh")
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 5c4b0e9's _has_sql: a /* inside a -- comment
def test_sql_rows_are_those_of_the_last_statement_after_a_line_comment_holding_a_block_start(tmp_path: Path) -> None:
    """5c4b0e9's ``_has_sql`` strips ``/* ... */`` (to the end when unclosed) before it strips ``--`` comments, so
    a ``/*`` inside a line comment swallows the statements after it: ``SELECT 1 AS x;\\n-- see /* notes\\nSELECT 2 AS
    x`` -- SQLite runs ``SELECT 2 AS x`` (the ``/*`` is part of the line comment) -- is split as one statement, the
    last one judged empty and dropped, and sql returns ``[{'x': 1}]``: the rows of a statement that is not the last,
    a silent wrong answer (likewise a ``'/*'`` or ``'--'`` string that leaves only blanks). Fix: strip comments in
    one left-to-right pass that knows quotes and both comment kinds (as ``_semicolons`` does), whichever starts
    first winning."""
    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    out = _run(ws, base / "home", "print(sql(query='SELECT 1 AS x;\\n-- see /* notes\\nSELECT 2 AS x'))\n")
    assert out.split("\n")[0] == "[{'x': 2}]", out


# ------------------------------------------------------------ 0ea18bb: parts that are neither items nor statements
def test_a_program_of_one_long_f_string_compiles_within_the_run_limits(tmp_path: Path) -> None:
    """0ea18bb refuses a program of more than 20,000 statements, as 100,000 comma-separated items were: the sandbox
    compiles outside the run's deadline and memory limit. An f-string's fields are neither: ``'b = f"' + '{a}' *
    85_000 + '"'`` (255 KB, under MAX_PROGRAM; one line, no comma) took the host process to 201 MiB (VmHWM) and
    12-14 s (2 cores, shared) for a run limited to 64 MiB and 2 s, before the sandbox answered "function too large"
    (``'a' + '<a' * 130_000``, a comparison chain: 138 MiB, 2.4 s). Fix: bound the program's expression nodes, not
    its separators (count tokens past a cheap bound: names, literals, ``{``), or compile in a worker the run's
    limits bound."""
    from test_attacks_round9_redteam import _peak_run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "a = 1\nb = f\"" + "{a}" * 85_000 + "\"\nprint('ran')\n"
    out, peak, took = _peak_run(ws, base / "home", code, memory=64 << 20, timeout=2)
    assert peak < 160 << 20 and took < 8, f"{peak >> 20} MiB, {took:.1f} s for a run of 64 MiB, 2 s: {out[-300:]}"


def test_a_program_of_many_statements_ended_by_carriage_returns_is_refused_uncompiled(tmp_path: Path) -> None:
    """0ea18bb's cheap count of statements is ``code.count("\\n") + code.count(";")``; only past it does it
    tokenize. The sandbox's parser ends a line at a lone ``\\r`` too (old Mac line endings), so round 12's program
    with ``\\r`` for ``\\n`` -- ``'a = 1\\r' + 'a\\r' * 125_000`` (250 KB, no comma, no ``\\n``) -- passes the cheap
    count and is compiled: the host process reached 249 MiB (VmHWM) for a run limited to 64 MiB (with ``\\n``:
    refused up front, 29 MiB). Fix: count ``\\r`` (and ``\\r\\n`` once) with ``\\n`` in the cheap count, or
    normalise line endings before it."""
    from test_attacks_round9_redteam import _peak_run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "a = 1\r" + "a\r" * 125_000 + "print('ran')\r"
    out, peak, _ = _peak_run(ws, base / "home", code, memory=64 << 20, timeout=30)
    assert peak < 160 << 20, f"the host took {peak >> 20} MiB for a run limited to 64 MiB: {out[-300:]}"
