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


@pytest.mark.parametrize("layout", ["conda", "planted"])
def test_a_start_up_file_of_a_python_environment_without_pyvenv_cfg_is_protected(tmp_path: Path, layout: str) -> None:
    """1afcc8a knows a virtual environment by its ``pyvenv.cfg``. A conda or pixi environment has none (it has
    ``conda-meta/``), and a ``.pth`` written where a venv will be made (``python -m venv`` keeps what is there) runs
    at that venv's first start: both checked with Python 3.11 (round 16). A ``site-packages`` folder, and a folder
    holding ``conda-meta``, are protected too."""
    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    env = ws / (".pixi/envs/default" if layout == "conda" else ".venv")
    site = env / "lib/python3.11/site-packages"
    site.mkdir(parents=True)
    if layout == "conda":
        (env / "conda-meta").mkdir()
    code = ("try:\n    print(create(path=" + repr(str(site.relative_to(ws) / "evil.pth")) + ", file_text='import os\\n'))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    assert _run(ws, base / "home", code).split() == ["PermissionError"]


@pytest.mark.parametrize("command", ["npx --yes file:impl", "npx --yes impl/", "npx -p file:impl cli",
                                     'npx "$CLAUDE_PROJECT_DIR/impl"'])
def test_a_package_folder_npx_runs_by_any_folder_spec_is_protected(tmp_path: Path, command: str) -> None:
    """8b3a3b7 reads ``npx ./tool`` as the folder's package; npm takes a spec as a folder also when it is
    ``file:x``, ends in ``/``, or is a path through the project's variable: each ran ``impl``'s bin (npx
    11.19, offline; round 16)."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "impl/package.json")
    assert out.split() == ["PermissionError"], out


_VARIABLE_WORDS = {  # a variable inside a script's word: a loop's, a function's, the environment's
    "a literal loop": ({"bash": "for t in lint run; do bash impl/$t.sh; done"}, "impl/run.sh"),
    "a function's $1": ({"bash": "f() { bash impl/$1.sh; }; f run"}, "impl/run.sh"),
    "a function's ${1}": ({"bash": 'f() { sh "impl/${1}.sh"; }; f run'}, "impl/run.sh"),
    "the environment's $X": ({"bash": "bash impl/$HOOK_NAME.sh"}, "impl/run.sh"),
    "a folder in a variable": ({"bash": "bash $TOOLS/run.sh"}, "impl/run.sh"),
    "a loop over a listing": ({"bash": "for f in $(ls impl); do sh impl/$f; done"}, "impl/run.sh"),
}


@pytest.mark.parametrize("form", sorted(_VARIABLE_WORDS))
def test_a_hook_script_named_through_a_variable_inside_its_word_is_protected(tmp_path: Path, form: str) -> None:
    """Round 16 (report-only): ``for t in lint test; do bash scripts/$t.sh; done`` and ``f() { bash impl/$1.sh;
    }; f run`` ran ``impl/run.sh``, which stayed writable: a loop's words, ``$1`` and a variable of the
    environment were read only where they stood as a whole word. Such a variable inside a path word is now read as
    any text (``impl/**.sh``): every file it may name is protected."""
    entry, target = _VARIABLE_WORDS[form]
    out = _edit_hook_target(tmp_path, entry, target)
    assert out.split() == ["PermissionError"], out


def test_a_variable_word_leaves_what_it_cannot_name_writable(tmp_path: Path) -> None:
    """The same loop protects only the files its word's literal parts can name: impl/run.py stays writable."""
    out = _edit_hook_target(tmp_path, {"bash": "for t in lint run; do bash impl/$t.sh; done"}, "impl/run.py")
    assert out.split() != ["PermissionError"], out


def test_a_large_git_config_is_read_within_the_run_deadline(tmp_path: Path) -> None:
    """Round 16 (report-only): the first write of a run reads what the repository's git config runs (``git config
    --list``, each value read as a hook command) with no deadline: a ``.git/config`` of 40,000 aliases (2 MiB, which
    only its owner can write) held a run limited to 2 s for about 13 s. The reading now stops at the run's
    deadline, refusing the write with a TimeoutError, and is not cached: the next run reads it again."""
    import subprocess

    from test_attacks_round14_limits import MiB, _host_run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    with (ws / ".git/config").open("a") as config:
        config.write("[alias]\n" + "".join(f"\ta{n} = !cd tools && sh run{n}.sh --flag v{n}\n" for n in range(40_000)))
    code = ("try:\n    create(path='notes.md', file_text='x')\n    print('written')\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _host_run(ws, base / "home", code, memory=512 * MiB, timeout=2, wait=60)
    assert took < 8, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"
    assert "TimeoutError" in out or "written" in out, out
