"""Red team, round 12 (issue 40): what landed since 14:50 left open. Each test runs a program through the sandbox
(``run``, monty) and fails while the breach is open (strict xfail). Timing findings are xfail tests that do not run
(``pytest --runxfail`` runs them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import catching, edit_output, git_workspace, hooked_workspace, hooks_json
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")


def _edit_hook_target(tmp_path: Path, entry: dict[str, object], target: str) -> str:
    """A repository whose ``.github/hooks/policy.json`` holds the ``preToolUse`` ``entry`` (which runs ``target``);
    a program edits ``target``: its output (``PermissionError`` while the boundary protects the file)."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", **entry}], "impl")
    (ws / "impl/__init__.py").write_text("")
    (ws / "package.json").write_text('{"name": "x", "workspaces": ["impl"], "scripts": {"lint": "exit 0"}}\n')
    (ws / target).write_text("exit 0\n")
    out = edit_output(ws, base, target)
    if out.split() != ["PermissionError"]:
        assert (ws / target).read_text() == "id\n"  # edited indeed: the hook now runs the program's text
    return out


def _write_text_makes_folders(monkeypatch: pytest.MonkeyPatch, name: str | None = None) -> None:
    """``Path.write_text`` makes the file's folders first (for files named ``name`` only, where given), so that
    :func:`_edit_hook_target` writes a target in a folder it does not make itself."""
    real = Path.write_text

    def write_text(self: Path, *args: object, **kwargs: object) -> int:
        if name is None or self.name == name:
            self.parent.mkdir(parents=True, exist_ok=True)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", write_text)


# ------------------------------------------------------------ hookruns._bases: a folder change with options
_CD_FORMS = {  # a hook entry that changes folder, then runs impl/run.sh (or .ps1), as the shell reads it
    "cd -P": ({"bash": "cd -P impl && ./run.sh"}, "impl/run.sh"),
    "cd --": ({"bash": "cd -- impl && ./run.sh"}, "impl/run.sh"),
    "env -C": ({"bash": "env -C impl ./run.sh"}, "impl/run.sh"),
    "Set-Location -Path": ({"powershell": "Set-Location -Path impl; ./run.ps1"}, "impl/run.ps1"),
}


@pytest.mark.parametrize("form", sorted(_CD_FORMS))
def test_a_hook_script_run_after_a_folder_change_with_options_is_protected(tmp_path: Path, form: str) -> None:
    """``hookruns._bases`` reads the folder a hook command changes to only from the word right after ``cd``
    (``pushd``, ``Set-Location``): an option there (``cd -P impl``, ``cd -- impl``, PowerShell's common
    ``Set-Location -Path impl``) ends the look, and ``env -C impl ./run.sh`` (GNU env's ``--chdir``) is not read
    as a folder change at all. ``./run.sh`` is then read from the repository's top, ``impl/run.sh`` stays
    writable: ``edit()`` succeeds and the CLI runs the program's text on the host at the next tool call (host
    code execution). Fix: skip options after ``cd``/``pushd``/``Set-Location`` (``-P``, ``-L``, ``-e``, ``--``,
    ``-Path``, ``-LiteralPath``) and read ``env -C DIR``/``--chdir[=]DIR`` as a folder change."""
    entry, target = _CD_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ hookruns._options: make's and npm's options
_RUNNER_FORMS = {  # a hook entry whose runner reads a file the boundary leaves writable
    "make -sC (joined short flags)": ({"bash": "make -sC impl check"}, "impl/Makefile"),
    "make --direc= (an abbreviated long option)": ({"bash": "make --direc=impl check"}, "impl/Makefile"),
    "npm -w (a workspace's package.json)": ({"bash": "npm -w impl run lint"}, "impl/package.json"),
    "npm --workspace=": ({"bash": "npm --workspace=impl run lint"}, "impl/package.json"),
    "npm pack (prepack, prepare scripts)": ({"bash": "npm pack --dry-run"}, "package.json"),
    "node --run (package.json scripts)": ({"bash": "node --run lint"}, "package.json"),
}


@pytest.mark.parametrize("form", sorted(_RUNNER_FORMS))
def test_the_file_a_runner_reads_first_is_protected_however_its_options_are_written(tmp_path: Path,
                                                                                  form: str) -> None:
    """336f6c7 reads make's and npm's options (``-C dir``, ``-Cdir``, ``--directory=dir``, ``-f``), but not as GNU
    make's getopt_long reads them: short flags joined before ``C`` (``make -sC impl``, ``-kC``) and unambiguous
    abbreviations of long options (``--direc=impl``, ``--mak=x``) leave ``impl/Makefile`` writable. npm runs
    a workspace's scripts with ``-w impl``/``--workspace=impl`` (``impl/package.json``, not the top's), and runs
    package.json's lifecycle scripts for other commands than ``run``/``test``/``install`` (``npm pack``: prepack,
    prepare, postpack; ``publish``, ``version``, ``rebuild`` likewise), and Node 22's ``node --run lint`` runs
    package.json's script as ``npm run`` does. Each file stays writable, ``edit()`` succeeds and the CLI runs the
    program's text on the host at the next tool call (host code execution). Fix: parse make's short options as
    getopt does (a group ending in ``C``/``f``/``I`` takes the rest or the next word) and its long options by
    unique prefix; protect ``<workspace>/package.json`` for ``-w``/``--workspace``; protect package.json for any
    npm command (or any command but a known-harmless few) and for ``node --run``."""
    entry, target = _RUNNER_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ hookruns._python_files: what python runs first
_PYTHON_FORMS = {  # a hook entry whose python runs a file the boundary leaves writable
    "a folder as the script (its __main__.py)": ({"bash": "python3 impl"}, "impl/__main__.py"),
    "a long option before -m": ({"bash": "python3 --check-hash-based-pycs never -m impl.run"}, "impl/run.py"),
    "sitecustomize in PYTHONPATH": ({"bash": "PYTHONPATH=impl python3 -m json.tool x"}, "impl/sitecustomize.py"),
}


@pytest.mark.parametrize("form", sorted(_PYTHON_FORMS))
def test_the_file_python_runs_first_is_protected_however_it_is_named(tmp_path: Path, form: str) -> None:
    """d06abdb and e590ea5 protect ``python -m a.b``'s module (in the cwd and PYTHONPATH's folders). Python also
    runs ``impl/__main__.py`` for ``python3 impl`` (a folder, or a zip, as the script: hookruns protects the word
    ``impl``, a folder, and no file in it); ``_module_name`` gives up at a long option that takes a value
    (``--check-hash-based-pycs never -m impl.run``); and with ``PYTHONPATH=impl`` every Python run imports
    ``impl/sitecustomize.py`` (and ``usercustomize``) at start-up, before any module of the hook's. Each stays
    writable: ``edit()`` succeeds and the program's text runs on the host at the next tool call (host code
    execution). Fix: for a script word that is a folder (or a .zip/.pyz), protect its ``__main__.py``; skip
    ``--check-hash-based-pycs VALUE`` and other valued long options; protect ``sitecustomize.py`` and
    ``usercustomize.py`` in each PYTHONPATH folder a command or entry sets."""
    entry, target = _PYTHON_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


def test_a_hook_script_named_through_a_parameter_operation_is_protected(tmp_path: Path) -> None:
    """d06abdb/f3c4eee read a command's own variables (``D=impl/; sh "$D/run.sh"``), but ``_VARIABLE`` knows only
    ``$D``, ``${D}`` and ``${D:-x}``: bash's other parameter operations (``${D%/}``, ``${D#./}``, ``${D/x/y}``,
    ``${D:0:4}``), common to trim a trailing slash, leave the word unread (``_expand`` gives None: an unknown
    variable) and ``impl/run.sh`` writable: ``edit()`` succeeds and the program's text runs on the host at the
    next tool call (host code execution). Fix: where a ``${NAME...}`` is not read, protect what the word's literal
    parts can name (``*/run.sh``), or refuse such a hooks file's scripts folder-wide, as for an unknown ``$X``."""
    out = _edit_hook_target(tmp_path, {"bash": 'D=impl/; sh "${D%/}/run.sh"'}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ sql's statement splitter: a trailing comment
def test_sql_rows_are_those_of_the_last_statement_before_a_trailing_comment(tmp_path: Path) -> None:
    """sql returns the rows of the query's last statement. ``split_statements`` keeps a trailing ``/* ... */``
    comment as a statement of its own (``_has_sql`` strips ``--`` comments, not block ones, and SQLite's
    ``complete_statement`` calls ``/* end */;`` complete), the worker runs it (no rows, no description) and the
    answer is reset: ``sql(query='SELECT 1 AS x; /* end */')`` returns ``[]`` where ``SELECT 1 AS x; -- end``
    returns ``[{'x': 1}]``: a silent wrong answer (an empty result a program reads as "no rows"). Fix: drop a
    piece holding only blanks and comments of either kind (strip ``/* */`` in ``_has_sql`` too, outside quotes),
    or have the worker skip a statement SQLite compiles to nothing (``cursor.description`` None and no change)
    rather than reset the answer."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "print(sql(query='SELECT 1 AS x; /* end */'))\nprint(sql(query='SELECT 1 AS x; -- end'))\n"
    out = _run(ws, base / "home", code)
    assert out.split("\n")[:2] == ["[{'x': 1}]", "[{'x': 1}]"], out


# ------------------------------------------------------------ sql's worker: a hot journal's super-journal
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _hot_journal(db: Path, victim: str) -> None:
    """``db``, a database of one row, beside a hot rollback journal (no page records) whose super-journal name is
    ``victim``: SQLite rolls the journal back when it next opens ``db``, then deletes the super-journal, since no
    journal it lists points back at it."""
    import sqlite3
    import struct

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("CREATE TABLE t(x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    pages = db.stat().st_size // 4096
    head = (_JOURNAL_MAGIC + struct.pack(">IIIII", 0, 0, pages, 512, 4096)).ljust(512, b"\0")
    name = victim.encode()
    tail = struct.pack(">I", 0) + name + struct.pack(">II", len(name), sum(name)) + _JOURNAL_MAGIC
    Path(f"{db}-journal").write_bytes(head + tail)


def _hooks_file_a_hot_journal_names(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository holding ``data.db`` beside a hot journal whose super-journal is its (empty) hooks file
    ``.github/hooks/policy.json``: the base, the workspace and the hooks file."""
    base, ws = hooked_workspace(tmp_path, [])
    policy = ws / ".github/hooks/policy.json"
    _hot_journal(ws / "data.db", str(policy))
    return base, ws, policy


def test_sql_on_a_database_with_a_hot_journal_deletes_no_protected_file(tmp_path: Path) -> None:
    """A repository holds ``data.db`` and a leftover ``data.db-journal`` (a hot rollback journal, 512 bytes of
    header and a tail; ``_check_file`` refuses only a journal that is a link or hard-linked). The journal's tail
    names a super-journal: ``.github/hooks/policy.json``. ``sql(db='data.db', query='SELECT x FROM t')`` opens the
    database; SQLite rolls the hot journal back and then (``pager_delsuper``) opens the super-journal, reads it as a
    list of child journal names, finds none pointing back, and unlinks it. Landlock lets the worker remove files
    below the database's folder, here the workspace's top: the protected hooks file (the repository's enforcement
    hooks) is deleted by a query, and the answer is ``[{'x': 1}]`` as if nothing happened; ``.codeact/``, ``.git/``
    files go the same way. Fix: refuse a database whose ``-journal`` is non-empty (or move it aside) before the
    worker opens it -- or open with ``?immutable``/read-only where the call only reads -- and grant the worker
    REMOVE_FILE for the database's own journal names only (a ruleset per file, not the folder)."""
    base, ws, policy = _hooks_file_a_hot_journal_names(tmp_path)
    out = _run(ws, base / "home", "print(sql(db='data.db', query='SELECT x FROM t'))")
    assert policy.exists(), f"the protected hooks file was deleted by a query: {out}"


def test_sql_without_landlock_deletes_no_file_outside_the_workspace(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Landlock is missing (macOS, kernels before 5.13, containers that disable it: ``write_ruleset`` gives
    None), docs/security.md says SQLite runs unconfined and only a folder swap, timed between the check and the
    open, can still be followed. A committed hot journal needs no race: its super-journal name is any absolute
    path, and ``sql(db='data.db', query='SELECT x FROM t')`` unlinks that file outside the workspace (any file the
    user may remove: ``~/.ssh/authorized_keys``, ``~/.bashrc``) while answering ``[{'x': 1}]``. Fix: as for the
    Landlock case, never let SQLite roll back a journal the program or repository left (refuse or remove a
    non-empty ``-journal`` before the open, after the link checks), and say in docs/security.md what an unconfined
    worker may still reach."""
    from codeact.tools import confine

    monkeypatch.setattr(confine, "write_ruleset", lambda _folder: None)  # as where there is no Landlock
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    victim = base / "outside.txt"
    victim.write_text("the user's file\n")
    _hot_journal(ws / "data.db", str(victim))
    out = _run(ws, base / "home", "print(sql(db='data.db', query='SELECT x FROM t'))")
    assert victim.exists(), f"a file outside the workspace was deleted by a query: {out}"


# ------------------------------------------------------------ boundary._hook_files: the 65th hooks file
def test_a_script_the_65th_hooks_file_runs_is_protected(tmp_path: Path) -> None:
    """``boundary._hook_files`` lists ``.github/hooks/*.json`` sorted and keeps the first
    ``hookruns.MAX_HOOKS_FILES`` (64): the rest are silently not read, where every other bound of 4065e86 fails
    closed (:class:`hookruns.Unread`: "a file past a bound is never read as harmless"). The Copilot CLI runs them
    all. A repository with 64 hooks files before ``zz.json`` (one a tool or check, as generators write them) leaves
    the script ``zz.json`` names writable: ``edit(path='impl/run.sh', ...)`` succeeds and the CLI runs the
    program's text on the host at the next tool call (host code execution). Fix: past MAX_HOOKS_FILES, raise
    Unread (refuse the writes the folder's hooks govern), as the other bounds do."""
    base, ws = git_workspace(tmp_path, ".github/hooks", "impl")
    for n in range(64):
        (ws / f".github/hooks/a{n:02}.json").write_text('{"version": 1, "hooks": {}}\n')
    (ws / ".github/hooks/zz.json").write_text(hooks_json({"type": "command", "bash": "sh impl/run.sh"}))
    (ws / "impl/run.sh").write_text("exit 0\n")
    out = edit_output(ws, base, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ sessions: a tuple comes back a list
def test_a_session_gives_a_tuple_back_as_a_tuple_or_says_it_was_not_kept(tmp_path: Path) -> None:
    """``sessions.plain`` keeps "only plain data JSON keeps exactly" and names in a note each global it leaves out
    (a set, a dict with a key that is not a string, NaN). ``_not_plain`` takes a tuple as plain, but JSON keeps it
    as a list, and 1e21d98 binds it back as such: after ``t = (1, 2)`` in one run of a session, the next run's
    ``t == (1, 2)`` is False, ``t`` as a dict key raises TypeError, and no note says so (a silent wrong answer;
    nested ones too: ``{'k': (3,)}`` comes back ``{'k': [3]}``). Fix: leave tuples out with the note ("a tuple:
    keep a list"), or tag and restore them as tuples."""
    from codeact.core.config import Settings
    from codeact.runner import run

    base = tmp_path.resolve()
    ws, home = base / "ws", base / "home"
    ws.mkdir()
    home.mkdir()
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "CODEACT_CONFIG_DIR": str(home / "cfg"), "XDG_STATE_HOME": str(home / "state")}
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        first = run("t = (1, 2)\n", workspace=ws, backend="monty", settings=Settings(), environ=environ,
                    session="s")
        second = run("print(t == (1, 2))\n", workspace=ws, backend="monty", settings=Settings(), environ=environ,
                     session="s")
    finally:
        os.chdir(cwd)
    said = " ".join([first.stdout, first.stderr, *first.notes, second.stdout, second.stderr, *second.notes])
    assert second.stdout.strip() == "True" or "tuple" in said, said


# ------------------------------------------------------------ after 688c609: runners selected by env, args, workspaces
_RUNNER_FORMS_2 = {  # a hook entry whose runner reads a file the boundary leaves writable
    "pnpm --filter": ({"bash": "pnpm --filter impl lint"}, "impl/package.json"),
    "yarn workspace": ({"bash": "yarn workspace impl lint"}, "impl/package.json"),
    "npm_config_prefix in the entry's env": ({"bash": "npm run lint", "env": {"npm_config_prefix": "impl"}},
                                             "impl/package.json"),
    "MAKEFILES in the entry's env": ({"bash": "make check", "env": {"MAKEFILES": "impl/x.mk"}}, "impl/x.mk"),
    "command and args apart (python3 -m)": ({"command": "python3", "args": ["-m", "impl.run"]}, "impl/run.py"),
    "command and args apart (make -C)": ({"command": "make", "args": ["-C", "impl"]}, "impl/Makefile"),
}


@pytest.mark.parametrize("form", sorted(_RUNNER_FORMS_2))
def test_the_file_a_runner_reads_first_is_protected_however_it_is_chosen(tmp_path: Path, form: str) -> None:
    """688c609 reads make's and npm's options as they do, npm's ``-w``. Still missed: pnpm's ``--filter impl``
    (``-F``) and yarn's ``workspace impl`` run ``impl/package.json``'s script; the entry's ``env`` setting
    ``npm_config_prefix`` (npm reads its config from the environment: ``npm run lint`` then reads
    ``impl/package.json``) or ``MAKEFILES`` (files make reads before the Makefile: ``impl/x.mk``); and an entry
    whose ``command`` is the runner and ``args`` its arguments (``{"command": "python3", "args": ["-m",
    "impl.run"]}``, ``{"command": "make", "args": ["-C", "impl"]}``): ``targets_in`` reads ``command`` and
    ``args`` as two commands, so ``-m`` and ``-C`` follow no runner. Each file stays writable, ``edit()``
    succeeds and the CLI runs the program's text on the host at the next tool call (host code execution). Fix:
    read pnpm's ``--filter``/``-F`` and yarn's ``workspace``; read the entry's ``env`` (and ``VAR=`` words) for
    ``npm_config_prefix``/``NPM_CONFIG_PREFIX`` and ``MAKEFILES``; read ``command`` followed by ``args`` as one
    command."""
    entry, target = _RUNNER_FORMS_2[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ after 688c609: forms its readers still miss
_FORMS_688 = {  # a hook entry that runs a file the boundary leaves writable, as bash, env, make, python read it
    "env -Cimpl (joined)": ({"bash": "env -Cimpl ./run.sh"}, "impl/run.sh"),
    "env --chd= (abbreviated)": ({"bash": "env --chd=impl ./run.sh"}, "impl/run.sh"),
    "make -wC (w takes no value)": ({"bash": "make -wC impl check"}, "impl/Makefile"),
    "make -wCimpl": ({"bash": "make -wCimpl check"}, "impl/Makefile"),
    "python3 -c 'import impl.run'": ({"bash": "python3 -c 'import impl.run'"}, "impl/run.py"),
    "python3 -c runpy.run_module": ({"bash": "python3 -c 'import runpy; runpy.run_module(\"impl.run\")'"},
                                    "impl/run.py"),
    "${D/x/y}": ({"bash": 'D=imp; sh "${D/imp/impl}/run.sh"'}, "impl/run.sh"),
    "${D:0:4}": ({"bash": 'D=implx; sh "${D:0:4}/run.sh"'}, "impl/run.sh"),
}


@pytest.mark.parametrize("form", sorted(_FORMS_688))
def test_a_hook_script_is_protected_in_the_forms_688c609_still_misses(tmp_path: Path, form: str) -> None:
    """688c609 reads ``env -C dir``/``--chdir=dir``, make's joined short flags and ``${D%x}``/``${D#x}``. Still
    missed: GNU env's joined ``-Cimpl`` and abbreviated ``--chd=impl`` (getopt_long, as make's now are);
    ``make -wC impl`` -- ``_options`` takes the first of ``c``, ``f``, ``w`` in a flag group as the one with a
    value, but make's ``-w`` is ``--print-directory`` (no value: npm's ``-w`` is the one that takes one), so
    ``C`` is lost and ``impl/Makefile`` stays writable (``-w`` is common in recursive makes); ``python3 -c
    'import impl.run'`` (or ``runpy.run_module``) names a module of the repository the hook itself runs first,
    as ``-m`` does; bash's ``${D/x/y}`` and ``${D:0:4}`` of a command's own variables. Each file stays writable:
    ``edit()`` succeeds and the CLI runs the program's text on the host at the next tool call (host code
    execution). Fix: read env's options with getopt_long rules too; pick the valued flag per runner (make:
    ``C``, ``f``, ``I``, ``o``, ``W``, ``j``, ``l``, ``O``; npm: ``C``, ``w``); for ``-c`` code protect the
    modules its ``import``/``from`` statements and ``run_module``/``run_path`` calls name (or every module of
    the cwd); where a ``${...}`` stays unread, protect what the word's literal parts can name (``*/run.sh``)."""
    entry, target = _FORMS_688[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ the program's own compile: statements, not commas
def test_a_program_of_many_short_statements_compiles_within_the_run_memory_limit(tmp_path: Path) -> None:
    """docs/tool-limits.md: "the sandbox compiles before the deadline and memory limit apply", so a program may hold
    at most 100,000 comma-separated items and 256 KiB. Statements are not counted: ``'a\\n' * 125_000`` (250 KB,
    under MAX_PROGRAM, no comma) takes the host process to about 250 MiB (measured with VmHWM; ``print(1)`` alone:
    32 MiB) for a run limited to 64 MiB, before the run fails with MemoryError; ``'a[0];' * 50_000`` (180 MiB)
    and ``'if a:a\\n' * 35_000`` (150 MiB) compile and run. A warm server compiling a few such programs at once
    holds several times the sum of their limits. Fix: count statements (and expression nodes) with the commas
    before compiling and refuse past a bound the memory limit sets, or compile in a worker the limit bounds."""
    from test_attacks_round9_redteam import _peak_run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "a = 1\n" + "a\n" * 125_000 + "print('ran')\n"
    out, peak, _ = _peak_run(ws, base / "home", code, memory=64 << 20, timeout=30)
    assert peak < 160 << 20, f"the host took {peak >> 20} MiB for a run limited to 64 MiB: {out[-300:]}"


# ------------------------------------------------------------ d1fc272's lazy classes: compiled with no deadline
def test_a_glob_over_a_gitignore_of_wide_classes_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """d1fc272 caps one pattern's classes at MAX_CLASS_SPAN (1,048,576 code points) and makes ``may_ignore``'s
    classes lazy (``walk._Class``: compiled when the ending reaches them). But ``rg_listing.Overrides.hold`` runs
    ``may_ignore`` over every ignore file (each up to 1 MiB) with no deadline check: a committed ``.gitignore``
    of 200 lines ``x<n>[<16 ranges of 65,536 code points>]`` (23 KB) compiles one class per line (each under the
    cap, about 0.1 s) when ``glob(pattern='*.py')`` checks whether a rule may end in ``.py``: the run limited to
    2 s took 21.6 s (a 1 MiB file: about 15 minutes; a repository may hold one in every folder), the warm
    server's other runs waiting on the interpreter meanwhile. Fix: check the run's deadline in ``may_ignore``
    (per line, or before each class compile), and bound the code points all of one file's classes span (as
    ``parse_ignore`` bounds a rule) -- or answer "may match" for a class wider than a few hundred code points
    without compiling it."""
    from test_attacks_round9_redteam import _peak_run

    base, ws = git_workspace(tmp_path)
    wide = "[" + "".join(f"{chr(0x100 + i)}-{chr(0x100 + i + 65535)}" for i in range(16)) + "]"
    (ws / ".gitignore").write_text("".join(f"x{n}{wide}\n" for n in range(200)), encoding="utf-8")
    (ws / "a.py").write_text("x = 1\n")
    code = catching("glob(pattern='*.py')")
    out, _, took = _peak_run(ws, base / "home", code, memory=128 << 20, timeout=2)
    assert took < 10, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ hookruns.matches: a hook's glob words, compiled unbounded
def test_a_hooks_file_of_wide_glob_words_is_matched_within_the_run_deadline(tmp_path: Path) -> None:
    """A hook word holding ``*``, ``?`` or ``[`` is a glob target (``hookruns._targets``), and every write below
    the hooks file's folder is matched against each with ``fnmatchcase`` (``hookruns.matches``): Python's fnmatch
    compiles each pattern with ``re`` -- no MAX_CLASS_SPAN check (d1fc272 counts a program's fnmatch patterns,
    not these) and no deadline check between targets. A committed ``.github/hooks/policy.json`` (159 KB, under
    every hookruns bound) of 5 entries of 100 words ``impl/x<n>[<16 ranges of 65,536 code points>]`` makes the
    first write of a run, ``edit(path='notes.txt', ...)``, take 13.4 s in a run limited to 2 s (a 1 MiB file:
    about 90 s, in one call, the warm server's other runs waiting meanwhile). Fix: count the class span of a
    hooks file's glob words against a bound while reading it (Unread past it), check the run's deadline between
    targets in ``matches``, and compile with ``patterns.compile_uncached`` (its cap) rather than fnmatch's."""
    from test_attacks_round9_redteam import _peak_run

    wide = "[" + "".join(f"{chr(0x100 + i)}-{chr(0x100 + i + 65535)}" for i in range(16)) + "]"
    entries = [{"type": "command", "bash": "sh " + " ".join(f"impl/x{e}_{n}{wide}" for n in range(100))}
               for e in range(5)]
    base, ws = hooked_workspace(tmp_path, entries)
    (ws / "notes.txt").write_text("a\n")
    code = catching("edit(path='notes.txt', old_str='a', new_str='b')")
    out, _, took = _peak_run(ws, base / "home", code, memory=128 << 20, timeout=2)
    assert took < 8, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ 688c609's ${D%x}: unbounded growth, no deadline
def test_a_hook_command_of_trimmed_variables_is_read_within_the_run_deadline(tmp_path: Path) -> None:
    """688c609 applies ``${D%x}``/``${D#x}`` of a command's own variables (``_trimmed``) before ``_VARIABLE``'s
    substitution, which alone counts the grown command against MAX_COMMAND_CHARS: a trimmed value is not
    counted, so ``D=<1,000 a>; E=${D%b}${D%b}...`` (800 times) sets ``E`` to 800 KB from a 5 KB command (past
    the 16 KiB bound the docs give; a third level reaches gigabytes). ``_trimmed`` then tries every cut of a value
    (``fnmatchcase(value[n:], pattern)`` for each ``n``: quadratic in its length), in one ``re.sub`` with no
    deadline check: ``sh x${E%b}`` takes about 10 s (E of 2.5 MB, from a 16 KB command: minutes). A committed
    hooks file of that one entry makes the first write of a run, ``edit(path='notes.txt', ...)``, take that long
    past a 2 s limit, in the host, the warm server's other runs waiting. Fix: count a trimmed value against
    MAX_COMMAND_CHARS as ``value_of`` counts the others (Unread past it), and trim with ``str.endswith``/
    ``removesuffix`` for a literal pattern (or bound the cuts tried, spending the budget between them)."""
    from test_attacks_round9_redteam import _peak_run

    command = "D=" + "a" * 1_000 + "; E=" + "${D%b}" * 800 + "; sh x${E%b}"
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": command}])
    (ws / "notes.txt").write_text("a\n")
    code = catching("edit(path='notes.txt', old_str='a', new_str='b')")
    out, _, took = _peak_run(ws, base / "home", code, memory=128 << 20, timeout=2)
    assert took < 6, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ 5c4b0e9's hot-journal check: the magic is not needed
def test_sql_beside_a_journal_without_the_magic_deletes_no_protected_file(tmp_path: Path) -> None:
    """5c4b0e9 refuses a database whose ``-journal`` starts with the rollback journal's 8-byte magic. SQLite calls
    a journal hot when its FIRST BYTE is not zero (``hasHotJournal``), then reads the super-journal name from the
    journal's TAIL and checks it exists, before it reads any header: a header without the magic ends playback
    (``readJournalHdr`` gives SQLITE_DONE), and ``end_playback`` still calls ``pager_delsuper`` on that name. A
    committed ``data.db-journal`` of one byte ``\\x01`` and the tail (``.github/hooks/policy.json``) passes the
    check, and ``sql(db='data.db', query='SELECT x FROM t')`` deletes the protected hooks file while answering
    ``[{'x': 1}]``. Fix: refuse any non-empty ``-journal`` whose first byte is not zero (what SQLite calls hot),
    or whose last 8 bytes are the magic (a super-journal name) -- or open only once the journal is moved aside."""
    import struct

    base, ws, policy = _hooks_file_a_hot_journal_names(tmp_path)
    journal = ws / "data.db-journal"
    name = str(policy).encode()
    journal.write_bytes(b"\x01" + struct.pack(">I", 0) + name + struct.pack(">II", len(name), sum(name))
                        + _JOURNAL_MAGIC)
    out = _run(ws, base / "home", "print(sql(db='data.db', query='SELECT x FROM t'))")
    assert policy.exists(), f"the protected hooks file was deleted by a query: {out}"


# ------------------------------------------------------------ after d9d6eac: files the entry's env names
_ENV_FORMS = {  # a hook entry whose env (or args) makes the command read a file the boundary leaves writable
    "BASH_ENV (bash sources it first)": ({"bash": "echo ok", "env": {"BASH_ENV": "impl/env.sh"}}, "impl/env.sh"),
    "NODE_OPTIONS --require": ({"bash": "node -e 1", "env": {"NODE_OPTIONS": "--require ./impl/r.js"}},
                               "impl/r.js"),
    "npm_config_workspace": ({"bash": "npm run lint", "env": {"npm_config_workspace": "impl"}},
                             "impl/package.json"),
    "npm_config_userconfig (script-shell, prefix ...)": (
        {"bash": "npm run lint", "env": {"npm_config_userconfig": "impl/npm.cfg"}}, "impl/npm.cfg"),
    "args of sh -c (not split)": ({"command": "sh", "args": ["-c", "python3 -m impl.run"]}, "impl/run.py"),
}


@pytest.mark.parametrize("form", sorted(_ENV_FORMS))
def test_a_file_an_entrys_env_makes_the_hook_read_first_is_protected(tmp_path: Path, form: str) -> None:
    """d9d6eac reads the entry's ``env`` for ``npm_config_prefix`` and ``MAKEFILES``. Other variables make the
    shell or runner read a repository file before anything the command names: ``BASH_ENV`` (bash, which runs the
    ``bash`` key, sources it before ANY command: ``{"bash": "echo ok", "env": {"BASH_ENV": "impl/env.sh"}}``),
    ``NODE_OPTIONS=--require ./impl/r.js`` (node preloads it), ``npm_config_workspace`` (``-w`` by the
    environment: ``impl/package.json``'s scripts) and ``npm_config_userconfig`` (an npmrc by another name:
    ``script-shell``, ``prefix``, ``node-options`` there decide what runs). And ``args`` are not split as nested
    commands are (``{"command": "sh", "args": ["-c", "python3 -m impl.run"]}``: the ``-c`` text is one word).
    Each file stays writable: ``edit()`` succeeds and the program's text runs on the host at the next tool call
    (host code execution). Fix: read the entry's env (and ``VAR=`` words) for ``BASH_ENV``/``ENV``,
    ``NODE_OPTIONS`` (``--require``/``-r``/``--import``), ``npm_config_*`` (case-insensitive: ``workspace``,
    ``userconfig``, ``globalconfig``); pass ``args`` through ``_nested`` as the shell keys' words are."""
    entry, target = _ENV_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ forms that are neither variables nor substitutions
def _encoded(command: str) -> str:
    import base64

    return base64.b64encode(command.encode("utf-16-le")).decode()


_RUN_FORMS = {  # a hook entry that runs impl/run.sh (or .ps1) with no variable or substitution in the way
    "find -exec": ({"bash": "find impl -name run.sh -exec sh {} \\;"}, "impl/run.sh"),
    "pwsh -EncodedCommand": ({"powershell": f"pwsh -NoProfile -EncodedCommand {_encoded('& ./impl/run.ps1')}"},
                             "impl/run.ps1"),
}


@pytest.mark.parametrize("form", sorted(_RUN_FORMS))
def test_a_hook_script_run_by_find_or_an_encoded_command_is_protected(tmp_path: Path, form: str) -> None:
    """docs/security.md: "a word with another variable or substitution names nothing". Two common forms hold
    neither. ``find impl -name run.sh -exec sh {} \\;`` names ``run.sh`` -- read from the cwd, not from
    ``find``'s start folder (a pattern, ``'*.sh'``, is caught: fnmatch's ``*`` crosses ``/``) -- so
    ``impl/run.sh`` stays writable; and
    PowerShell's ``-EncodedCommand``/``-enc`` (base64 of UTF-16LE, used to avoid quoting) hides
    ``& ./impl/run.ps1`` entirely. ``edit()`` succeeds and the CLI runs the program's text on the host at the next
    tool call (host code execution). Fix: read ``find DIR ... -name PAT -exec`` as the glob ``DIR/**/PAT``
    (``-exec``/``-execdir``/``-ok``); decode ``-EncodedCommand``/``-enc``/``-e``/``-ec`` and read it as a
    PowerShell command (or refuse writes folder-wide for a hooks file holding one: Unread)."""
    entry, target = _RUN_FORMS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out
