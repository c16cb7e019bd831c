"""Red team, round 18 (issue 40; report-only): attacks on 22a20a9 (Python's imports and a variable inside a word
followed; a pattern's ``*`` within one part), 3d1f93f (git config's commands read by the run's deadline) and
76f1230 (``beneath.read_regular_within``). Each test runs a program through the sandbox (``run``, monty) and fails
while the finding is open (they were strict xfails; the lead fixed all 30 in hookruns and pyimports); a false
positive is a test that the ordinary write succeeds. Every breach was checked with the real tool on this Linux machine (bash 5.2, Python 3.11): where the sandbox's write goes
through, the test itself runs the hook's command with the real bash and asserts that it ran the planted text."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from attack_helpers import create_output, edit_output, hooked_workspace
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

def _workspace(tmp_path: Path, command: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A repository whose ``.github/hooks/policy.json`` runs the bash ``command`` at preToolUse, holding ``files``
    (one whose text starts with ``#!`` executable)."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": command}])
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
        if text.startswith("#!"):
            (ws / name).chmod(0o755)
    return base, ws


def _host_runs_planted(ws: Path, command: str) -> bool:
    """Whether the hook ``command``, run by the real bash in ``ws`` as the CLI runs it, prints ``PLANTED``."""
    done = subprocess.run(["bash", "-c", command], cwd=ws, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60, check=False)
    return "PLANTED" in done.stdout


def _edit_imported(tmp_path: Path, command: str, files: dict[str, str], target: str) -> str:
    """A repository whose hook runs ``command`` and holds ``files``; a program edits ``target`` (``x = 0``) to
    print ``PLANTED``: its output. Where the edit goes through, the hook's command must have run it."""
    base, ws = _workspace(tmp_path, command, {**files, target: "x = 0\n"})
    out = edit_output(ws, base, target, "x = 0", "print('PLANTED')")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out  # the host ran what the program wrote
    return out


# ------------------------------------------------------------ 22a20a9: what a Python start imports, not followed
_PACKAGES_NOT_READ = {  # a module a package (not a `name.py`) of the folder imports: its text is never parsed
    "python -m a package's module": (
        "python3 -m tools.check",
        {"tools/__init__.py": "", "tools/check.py": "import lib.util\n", "lib/__init__.py": ""}, "lib/util.py"),
    "a package's __init__ imports another package": (
        "python3 scripts/check.py",
        {"scripts/check.py": "import helpers\n", "scripts/helpers/__init__.py": "import common.paths\n",
         "scripts/common/__init__.py": ""}, "scripts/common/paths.py"),
    "python -m a package's __main__": (
        "python3 -m tools",
        {"tools/__init__.py": "", "tools/__main__.py": "import lib.util\n", "lib/__init__.py": ""}, "lib/util.py"),
}


@pytest.mark.parametrize("form", sorted(_PACKAGES_NOT_READ))
def test_what_a_package_of_the_folder_imports_is_protected(tmp_path: Path, form: str) -> None:
    """``hookruns._import_files`` follows an import ``name`` by parsing ``folder/name.py`` only; a package
    (``name/``) is protected as ``name/**`` but its modules are never read. So ``python3 -m tools.check`` (or
    ``-m tools``, its ``__main__.py``) whose ``tools/check.py`` says ``import lib.util``, a root package ``lib/``,
    protects ``tools/**``, the root's ``*.py`` and ``lib/__init__.py``, not ``lib/util.py``; and
    ``scripts/check.py`` importing ``helpers`` whose ``__init__.py`` imports ``common.paths`` leaves
    ``scripts/common/paths.py`` writable. Python 3.11 ran each planted ``print`` (the test runs the hook's command).
    Against docs/security.md: "every file of each package ... followed through the modules of that folder they
    import". Suggested fix: for a package, parse every module below it that the run may import (its
    ``__init__.py``, the ``-m`` module and ``__main__.py``, each ``.py`` of the package, within the 32-module
    bound), or protect the whole folder (``**``) as for imports not known."""
    command, files, target = _PACKAGES_NOT_READ[form]
    assert _edit_imported(tmp_path, command, files, target).split() == ["PermissionError"]


_CD_FORMS = {  # the script's folder reached by a `cd` of the command, not the entry's cwd
    "cd, then the script": "cd tools && python3 check.py",
    "cd, then -m": "cd tools && python3 -m check",
    "cd, then ./check.py": "cd tools && ./check.py",
}


@pytest.mark.parametrize("form", sorted(_CD_FORMS))
def test_what_a_script_after_cd_imports_is_protected(tmp_path: Path, form: str) -> None:
    """``hookruns._import_files`` reads the script (``_module_source(os.path.join(cwd, script))``) from the entry's
    ``cwd``, not from the folders a ``cd`` of the command reached (``_bases``): for ``cd tools && python3
    check.py`` it reads ``./check.py`` (missing) and follows nothing, so ``tools/check.py``'s ``import lib.util``
    leaves ``tools/lib/util.py`` writable (the surface, ``tools/*.py``, is protected through the bases); so do
    ``cd tools && python3 -m check`` and ``cd tools && ./check.py`` (``_named`` reads ``./check.py`` from the
    entry's cwd too, and for an extensionless ``./check`` whose ``#!`` names python, ``_runs_python`` finds no
    file, so not even the surface is protected). Python ran the planted text. ``cd x && python3 y.py`` is the most common shape of a hook. Suggested fix: read the script
    and its folder's modules from each base, as ``_targets`` does."""
    files = {"tools/check.py": "#!/usr/bin/env python3\nimport lib.util\n", "tools/lib/__init__.py": ""}
    assert _edit_imported(tmp_path, _CD_FORMS[form], files, "tools/lib/util.py").split() == ["PermissionError"]


_LOADERS = {  # scripts/check.py loads scripts/plugins/cfg.py in a way pyimports.imports_of does not see
    "importlib.util.spec_from_file_location": (
        "import importlib.util, pathlib\n"
        "spec = importlib.util.spec_from_file_location('cfg', pathlib.Path(__file__).parent / 'plugins' / 'cfg.py')\n"
        "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"),
    "SourceFileLoader": (
        "import os\nfrom importlib.machinery import SourceFileLoader\n"
        "SourceFileLoader('cfg', os.path.join(os.path.dirname(__file__), 'plugins', 'cfg.py')).load_module()\n"),
    "import_module relative to a package": "import importlib\nimportlib.import_module('.cfg', package='plugins')\n",
    "import_module under another name": "from importlib import import_module as load\nload('plugins.cfg')\n",
    "sys imported as another name": (
        "import os, sys as s\ns.path.insert(0, os.path.join(os.path.dirname(__file__), 'plugins'))\nimport cfg\n"),
    "from sys import path": (
        "import os\nfrom sys import path\npath.insert(0, os.path.join(os.path.dirname(__file__), 'plugins'))\n"
        "import cfg\n"),
    "exec of an import": "exec('from plugins import cfg')\n",
    "pkgutil.resolve_name": "import pkgutil\npkgutil.resolve_name('plugins.cfg')\n",
}


@pytest.mark.parametrize("form", sorted(_LOADERS))
def test_a_module_a_hook_script_loads_otherwise_is_protected(tmp_path: Path, form: str) -> None:
    """``pyimports.imports_of`` knows ``import``, ``from``, and calls whose function is *named*
    ``import_module``/``__import__``/``run_module``/``find_spec``, ``sys.path`` written as ``sys.path``, and
    ``addsitedir``/``run_path`` (Unread). It misses: loading a file by path (``spec_from_file_location`` +
    ``exec_module``, ``SourceFileLoader(...).load_module()``: the same as ``runpy.run_path``, which is Unread); a
    relative ``import_module('.cfg', package='plugins')`` (read as the top-level ``cfg``: ``plugins/cfg.py`` is
    what runs); a loader bound to another name (``from importlib import import_module as load``); ``sys.path``
    reached through ``import sys as s`` or ``from sys import path``; an import in ``exec``'s text;
    ``pkgutil.resolve_name('plugins.cfg')``. ``python3 scripts/check.py`` ran the planted
    ``scripts/plugins/cfg.py`` in every form (Python 3.11), which stays writable. Suggested fix: resolve a
    relative name against its ``package`` argument; treat any ``path`` attribute or name bound from ``sys`` (track
    ``import sys as x``, ``from sys import path``), ``spec_from_file_location``, ``SourceFileLoader``,
    ``load_source``, ``exec_module``/``load_module`` and a loader imported under another name (``from importlib
    import ... as``), ``exec``/``eval``/``compile`` (parse a constant text, else dynamic) and ``resolve_name`` as
    Unread or as dynamic (the whole folder)."""
    files = {"scripts/check.py": _LOADERS[form], "scripts/plugins/__init__.py": ""}
    out = _edit_imported(tmp_path, "python3 scripts/check.py", files, "scripts/plugins/cfg.py")
    assert out.split() == ["PermissionError"]


def test_what_a_python_script_read_from_stdin_imports_is_protected(tmp_path: Path) -> None:
    """``python3 - < scripts/check.py`` runs the script read from stdin with the folder it runs in first on
    ``sys.path`` (``''``), as ``-c`` does. ``_python_start`` stops at ``-`` and returns no start, so no folder's
    imports are protected (the redirected file is read as a script instead: ``scripts/*.py`` protected, the wrong
    folder): a program's new ``json.py`` at the repository's top ran when the script imported ``json`` (Python
    3.11). Suggested fix: read ``-`` (and no script at all: ``python3 < x.py``) as a ``-c`` start whose code is the
    redirected file's text (or not known: the cwd's whole folder)."""
    command = "python3 - < scripts/check.py"
    base, ws = _workspace(tmp_path, command, {"scripts/check.py": "import json\n"})
    out = create_output(ws, base, "json.py", "print('PLANTED')\n")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


_NOT_PYTHON_BY_ITS_LINE = {  # a script python runs, whose first 127 bytes name no python
    "a sh line that execs python on itself": "#!/bin/sh\n''''exec python3 \"$0\" \"$@\" #'''\nimport json\n",
    "python past the 127th byte of #!": "#!/usr/bin/env" + " " * 130 + "python3\nimport json\n",
}


@pytest.mark.parametrize("form", sorted(_NOT_PYTHON_BY_ITS_LINE))
def test_what_a_script_python_runs_imports_is_protected(tmp_path: Path, form: str) -> None:
    """``hookruns._runs_python`` takes ``./tools/check`` as a Python start only where its first 127 bytes hold
    ``#!`` and ``python``. Linux reads up to 255 bytes of the ``#!`` line (``#!/usr/bin/env`` and 130 spaces
    before ``python3`` ran Python here), and the common sh/Python polyglot (``#!/bin/sh`` then
    ``''''exec python3 "$0" "$@" #'''``) re-executes itself as Python: both ran a program's new ``tools/json.py``
    when the script imported ``json``. Suggested fix: read 256 bytes of the line; for a script whose line names a
    shell, treat an ``exec python`` of ``$0`` as Python, or protect the script folder's Python surface for every
    extensionless script a hook runs (cheap: ``*.py`` of that folder)."""
    command = "./tools/check"
    base, ws = _workspace(tmp_path, command, {"tools/check": _NOT_PYTHON_BY_ITS_LINE[form]})
    (ws / "tools/check").chmod(0o755)
    out = create_output(ws, base, "tools/json.py", "print('PLANTED')\n")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 22a20a9: a variable inside a path word as `**`
_DOTS = {  # a variable whose value climbs out of the pattern's literal folder
    "a loop's value holding ..": ("for t in lint ../tools/run; do bash impl/$t.sh; done", "tools/run.sh"),
    "a .. after the variable": ("for t in a; do bash impl/$t/../run.sh; done", "impl/run.sh"),
    "a value holding a space": ('for t in "run x"; do bash impl/$t.sh; done', "impl/run"),
}


@pytest.mark.parametrize("form", sorted(_DOTS))
def test_a_script_a_variable_with_dots_names_is_protected(tmp_path: Path, form: str) -> None:
    """``hookruns._as_pattern`` reads ``impl/$t.sh`` as ``impl/**.sh``, "every file it may be". But a value may
    hold ``..`` (``for t in lint ../tools/run``: bash ran ``impl/../tools/run.sh``, i.e. ``tools/run.sh``), and a
    ``..`` after the variable (``impl/$t/../run.sh``) is folded away: ``\\x00/`` becomes ``**`` and ``fold`` drops
    the trailing dots of ``**..``, giving ``impl/**/run.sh``, which misses ``impl/run.sh`` that bash ran for
    ``t=a``. And an unquoted variable is split into words: ``for t in "run x"; do bash impl/$t.sh`` ran
    ``impl/run`` (``x.sh`` its argument), which ``impl/**.sh`` misses. Each file stays writable. Suggested fix: a literal loop's values are known: substitute them; otherwise
    a variable can reach any folder (``..``), so read the word as ``**`` plus its literal tail after the last
    variable (``**.sh``, ``**/run.sh`` from the workspace's top), or Unread where a ``..`` follows a variable; an
    unquoted variable may end the word (``impl/**``)."""
    command, target = _DOTS[form]
    base, ws = _workspace(tmp_path, command, {"impl/lint.sh": "exit 0\n", "impl/a/.keep": "", target: "exit 0\n"})
    out = edit_output(ws, base, target, "exit 0", "echo PLANTED")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


def test_a_script_a_read_word_names_through_a_new_list_is_protected(tmp_path: Path) -> None:
    """A regression of 22a20a9: ``_unknown`` now returns False for any word ``_as_pattern`` can read, before its
    check of the command's own names, so ``while read -r f; do bash "checks/$f"; done < checks.txt`` (``f`` set by
    ``read``), which was Unread (every write refused), is now ``checks/**``. The value is the text of
    ``checks.txt``, a bare word protected only while it exists; a hook that reads an optional list (``[ -f
    checks.txt ] && ...``) lets a program create ``checks.txt`` holding ``../evil.sh`` and ``evil.sh``: bash ran
    ``checks/../evil.sh``. Suggested fix: keep a word holding a variable of the command's own (``read``,
    ``mapfile``, a substituted loop) Unread, as before; read only the environment's and a literal loop's as
    patterns."""
    command = '[ -f checks.txt ] && while read -r f; do bash "checks/$f"; done < checks.txt'
    base, ws = _workspace(tmp_path, command, {"checks/lint.sh": "exit 0\n"})
    code = ("for path, text in (('evil.sh', 'echo PLANTED\\n'), ('checks.txt', '../evil.sh\\n')):\n"
            "    try:\n        create(path=path, file_text=text)\n        print('created')\n"
            "    except Exception as exc:\n        print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    if out.split() == ["created", "created"]:
        assert _host_runs_planted(ws, command), out
    assert "PermissionError" in out.split(), out


# ------------------------------------------------------------ false positives of 22a20a9's Python surface
_ORDINARY_EDITS = {  # an existing module of the project, imported by nothing the hook runs
    "another script beside the hook's script": (
        "python3 scripts/log_tool_use.py", {"scripts/log_tool_use.py": "import json, sys\n"}, "scripts/release.py"),
    "a top-level module under python -m": (
        "python3 -m tools.audit", {"tools/__init__.py": "", "tools/audit.py": "import json\n"}, "manage.py"),
    "a top-level package's __init__ under python -m": (
        "python3 -m tools.audit", {"tools/__init__.py": "", "tools/audit.py": "import json\n"}, "myapp/__init__.py"),
}


@pytest.mark.parametrize("form", sorted(_ORDINARY_EDITS))
def test_an_existing_module_no_hook_imports_stays_writable(tmp_path: Path, form: str) -> None:
    """22a20a9 protects the whole importable surface of the folder first on ``sys.path`` (``*.py``,
    ``*/__init__.*``...), existing files included. A hook ``python3 scripts/log_tool_use.py`` (importing ``json``
    and ``sys``) makes every script of ``scripts/`` (``release.py``) read-only; any hook ``python3 -m x`` at the
    repository's top makes every top-level module (Django's ``manage.py``, ``setup.py``, ``conftest.py``) and every
    top-level package's ``__init__.py`` (``myapp/__init__.py``) read-only, for every run. An existing
    ``release.py`` or ``manage.py`` runs only if something imports ``release`` or ``manage``: what the hook runs
    imports the standard library's and installed packages' names and the names followed. Suggested fix: protect
    new files of the surface (any name) and existing ones whose name is a module Python may import here
    (``sys.stdlib_module_names``, the names followed, the installed top-level names), or say in docs/security.md
    that a Python hook freezes its folder's modules."""
    command, files, target = _ORDINARY_EDITS[form]
    base, ws = _workspace(tmp_path, command, {**files, target: "x = 0\n"})
    out = edit_output(ws, base, target, "x = 0", "x = 1")
    assert out.split() != ["PermissionError"], out
    assert (ws / target).read_text() == "x = 1\n"


def test_a_namespace_module_the_standard_library_imports_is_protected(tmp_path: Path) -> None:
    """Python 3.11's ``copy`` (imported by ``dataclasses``, ``pickle`` and much else) runs ``try: from
    org.python.core import PyStringMap``. With a folder ``org/python/`` (no ``__init__.py``: a namespace package)
    beside the hook's script, that import runs ``org/python/core.py``: ``python3 scripts/check.py`` whose script
    is only ``import dataclasses`` ran a program's new ``scripts/org/python/core.py`` (Python 3.11.7). The surface
    (``*.py``, ``*/__init__.*``) stops at one folder down, and ``org`` is no name the script imports. Suggested
    fix: protect every ``.py`` (and ``.pyc``/``.so``) at any depth of the folder first on ``sys.path`` (a
    namespace package's module has no ``__init__`` on its way), or at least below any folder named like a module
    the standard library tries (``org``, ``_winapi``, ``msvcrt``, ``nt``)."""
    command = "python3 scripts/check.py"
    base, ws = _workspace(tmp_path, command, {"scripts/check.py": "import dataclasses\n"})
    out = create_output(ws, base, "scripts/org/python/core.py", "print('PLANTED')\n")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


def _linked(tmp_path: Path, link: str, to: str, files: dict[str, str]) -> tuple[Path, Path]:
    """:func:`_workspace` for ``python3 scripts/check.py`` holding ``files`` and the repository's own link ``link``
    to ``to`` (relative to the link's folder)."""
    base, ws = _workspace(tmp_path, "python3 scripts/check.py", files)
    (ws / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(to, ws / link)
    return base, ws


def test_what_a_linked_hook_script_imports_is_protected(tmp_path: Path) -> None:
    """Python puts the folder of the script's real path first on ``sys.path`` (links resolved). With the
    repository's ``scripts/check.py -> ../shared/check.py`` (a hook runs ``python3 scripts/check.py``), editing
    ``shared/check.py`` is refused (the named script is followed through the link), but the import surface is
    taken from the link's folder (``scripts/*.py``): a program's new ``shared/json.py`` is created, and Python 3.11
    ran it when the script imported ``json``. Suggested fix: take the folder first on the path from the script's
    real path (``os.path.realpath`` inside the workspace) as well as the name written."""
    base, ws = _linked(tmp_path, "scripts/check.py", "../shared/check.py", {"shared/check.py": "import json\n"})
    out = create_output(ws, base, "shared/json.py", "print('PLANTED')\n")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, "python3 scripts/check.py"), out
    assert out.split() == ["PermissionError"]


def test_the_target_of_a_linked_module_a_hook_script_imports_is_protected(tmp_path: Path) -> None:
    """The repository's ``scripts/helper.py -> ../shared/helper.py`` (a module shared by links, as monorepos do);
    the hook's ``scripts/check.py`` imports ``helper``. ``scripts/helper.py`` is protected (the surface), and
    ``_module_source`` even reads the link's target to follow its imports, but ``shared/helper.py`` itself stays
    writable: a program's edit of it ran when the hook ran (Python 3.11). Suggested fix: protect the real path of
    each module file followed (and of each surface file that is a link inside the workspace)."""
    base, ws = _linked(tmp_path, "scripts/helper.py", "../shared/helper.py",
                       {"scripts/check.py": "import helper\n", "shared/helper.py": "x = 0\n"})
    out = edit_output(ws, base, "shared/helper.py", "x = 0", "print('PLANTED')")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, "python3 scripts/check.py"), out
    assert out.split() == ["PermissionError"]


def test_what_a_folder_python_runs_imports_is_protected(tmp_path: Path) -> None:
    """``python3 tools`` runs ``tools/__main__.py`` with ``tools/`` itself first on ``sys.path``.
    ``_python_files`` takes ``os.path.dirname('tools')`` (the repository's top) as that folder, so the top's
    ``*.py`` are protected and ``tools/*.py`` are not: a program's new ``tools/json.py`` ran when ``__main__.py``
    imported ``json`` (Python 3.11). ``python3 tools/`` (a trailing slash) is read right. Suggested fix: for a
    script that is a folder or zip (no ``.py``/``.pyw`` suffix, or an existing folder), the folder first on the
    path is the script itself, and its ``__main__.py`` is the code whose imports are followed."""
    command = "python3 tools"
    base, ws = _workspace(tmp_path, command, {"tools/__main__.py": "import json\n"})
    out = create_output(ws, base, "tools/json.py", "print('PLANTED')\n")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


def test_what_python_c_imports_after_chdir_is_protected(tmp_path: Path) -> None:
    """For ``-c`` Python 3.11 puts ``''`` first on ``sys.path``: the folder the process is in *when it imports*,
    not when it starts. ``python3 -c "import os; os.chdir('tools'); import check"`` ran a program's
    ``tools/check.py``; ``pyimports`` reads ``os.chdir`` as nothing, so only the top's surface is protected.
    Suggested fix: read a ``-c`` program calling ``os.chdir`` (or ``os.fchdir``) as one that moves its path
    (Unread), as ``sys.path`` is."""
    command = """python3 -c "import os; os.chdir('tools'); import check" """
    base, ws = _workspace(tmp_path, command, {"tools/check.py": "x = 0\n"})
    out = edit_output(ws, base, "tools/check.py", "x = 0", "print('PLANTED')")
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, command), out
    assert out.split() == ["PermissionError"]


def test_a_file_python_cannot_import_stays_writable_beside_a_dynamic_import(tmp_path: Path) -> None:
    """Where a hook script's imports are not known (a name computed when it runs, a file that does not parse or is
    over 1 MiB, more than 32 modules), ``_import_files`` protects ``folder/**``: every file below the folder,
    whatever it is. A repository whose hook is ``python3 hook.py`` at its top, loading
    ``importlib.import_module('checks.' + sys.argv[1])`` (a common plugin shape), has every file read-only for
    every run: ``README.md``, ``src/app.js``. Python imports only ``.py``, ``.pyc``, ``.so``/``.pyd`` (and a
    package's folder), so nothing else below the folder can run through an import. Suggested fix: protect the
    importable files at any depth (``**/*.py``, ``**/*.pyc``, ``**/*.so``, ``**/*.pyd``, ``**/__pycache__/**``)
    instead of ``**``."""
    command = "python3 hook.py"
    hook = "import importlib, sys\nimportlib.import_module('checks.' + sys.argv[1])\n"
    base, ws = _workspace(tmp_path, command, {"hook.py": hook, "README.md": "x = 0\n"})
    out = edit_output(ws, base, "README.md", "x = 0", "x = 1")
    assert out.split() != ["PermissionError"], out
    assert (ws / "README.md").read_text() == "x = 1\n"
