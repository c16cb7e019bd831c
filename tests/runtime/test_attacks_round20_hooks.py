"""Red team, round 20 (report-only): hook commands whose variables, copies, writers, stdin paths, wrappers and
``-c``/``-e`` code hookruns misreads, so a program's write reaches what the hook runs on the host. Each test runs a
program through the sandbox and fails while the finding is open. Where the real tool is on this machine, the test
runs the hook's command with it and asserts that it ran the planted text when the sandbox's write went through."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import proved_edit

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_PLANT = "echo PLANTED"





# ------------------------------------------------------------ 1: a literal variable set again by a command
_RESET = {
    "read": ("T=guard; read -r T < tools/name; bash tools/$T.sh", "tools/evil.sh"),
    "mapfile": ("T=guard; mapfile -t T < tools/name; bash tools/$T.sh", "tools/evil.sh"),
    "for over literals": ("T=guard; for T in evil; do :; done; bash tools/$T.sh", "tools/evil.sh"),
    "printf -v": ("T=guard; printf -v T %s evil; bash tools/$T.sh", "tools/evil.sh"),
    "unset": ("T=guard; unset T; bash tools/run$T.sh", "tools/run.sh"),
    "${T:=x} of an empty T": ("T=; : ${T:=evil}; bash tools/$T.sh", "tools/evil.sh"),
    "((T++))": ("T=1; ((T++)); bash tools/run$T.sh", "tools/run2.sh"),
    "let T++": ("T=1; let T++; bash tools/run$T.sh", "tools/run2.sh"),
}


@pytest.mark.parametrize("form", sorted(_RESET))
def test_variable_set_again_by_a_command_is_not_its_literal(tmp_path: Path, form: str) -> None:
    """``T=guard; read -r T < tools/name; bash tools/$T.sh``: _assigned writes ``guard`` into every later ``$T``
    before _own_names sees the ``read``, so the hook is read as running ``tools/guard.sh`` while bash runs the
    script the file names (``tools/evil.sh``), which stays writable. The same for ``mapfile``, a literal ``for``,
    ``printf -v``, ``unset`` (``$T`` empty), ``: ${T:=x}`` of an empty ``T``, ``((T++))`` and ``let``. bash 5 ran
    the planted text."""
    command, target = _RESET[form]
    files = {"tools/name": "evil\n", "tools/guard.sh": "exit 0\n", target: "exit 0\n"}
    out = proved_edit(tmp_path, {"bash": command}, files, target, "exit 0", _PLANT)
    assert out.split() == ["PermissionError"]


def test_array_assignment_is_not_an_empty_value(tmp_path: Path) -> None:
    """``A=(tools); bash "$A/evil.sh"``: shlex splits ``A=(tools)`` as ``A=``, ``(``, ``tools``, ``)``, so ``$A``
    is read as empty (``/evil.sh``, outside the repository) while bash takes an array's first item:
    ``tools/evil.sh`` runs, and stays writable. bash 5 ran the planted text."""
    out = proved_edit(tmp_path, {"bash": 'A=(tools); bash "$A/evil.sh"'}, {"tools/evil.sh": "exit 0\n"},
                "tools/evil.sh", "exit 0", _PLANT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 2: node -e requiring a folder
_NODE_FOLDER = {
    "require('.')": ({"bash": "node -e \"require('.')\""}, "index.js"),
    "require('..')": ({"bash": "node -e \"require('..')\"", "cwd": "web"}, "index.js"),
}


@pytest.mark.parametrize("form", sorted(_NODE_FOLDER))
def test_node_eval_requiring_a_folder_is_protected(tmp_path: Path, form: str) -> None:
    """``node -e "require('.')"`` loads the folder's ``index.js`` (or its package.json's main); _NODE_SPEC wants a
    ``/`` in the literal, so ``'.'`` and ``'..'`` name nothing and ``index.js`` stays writable. node 20 ran the
    planted text."""
    entry, target = _NODE_FOLDER[form]
    files = {target: "module.exports = 0;\n", "web/.keep": ""}
    out = proved_edit(tmp_path, entry, files, target, "module.exports = 0;", "console.log('PLANTED');", "node")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 3: -c / -e code that runs a script by an argv list
_ARGV_CODE = {
    "python subprocess.run": ("python3 -c \"import subprocess; subprocess.run(['bash', 'tools/check'])\"",
                              "python3"),
    "python os.execvp": ("python3 -c \"import os; os.execvp('bash', ['bash', 'tools/check'])\"", "python3"),
    "node execFileSync": ("node -e \"require('child_process').execFileSync('bash', ['tools/check'], "
                          "{stdio: 'inherit'})\"", "node"),
}


@pytest.mark.parametrize("form", sorted(_ARGV_CODE))
def test_script_run_by_eval_code_is_protected(tmp_path: Path, form: str) -> None:
    """``python3 -c "subprocess.run(['bash', 'tools/check'])"`` (``os.execvp``, node's ``execFileSync``) runs ``tools/check``; the code's words are split as a shell's
    (``[bash,``, ``tools/check])``), so the script is named by no word and stays writable. python 3.11 and
    node 20 ran the planted text."""
    command, tool = _ARGV_CODE[form]
    out = proved_edit(tmp_path, {"bash": command}, {"tools/check": "exit 0\n"}, "tools/check", "exit 0", _PLANT, tool)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 4: a folder copied, then its script run
_FOLDER_COPY = {
    "cp -r parts/. build/": "mkdir -p build && cp -r parts/. build/ && bash build/run.sh",
    "cp -rT parts build": "cp -rT parts build && bash build/run.sh",
    "ln -sfn parts build": "ln -sfn parts build && bash build/run.sh",
    "xargs cp -t build": "mkdir -p build && find parts -type f | xargs cp -t build && bash build/run.sh",
}


@pytest.mark.parametrize("form", sorted(_FOLDER_COPY))
def test_script_copied_with_its_folder_is_protected(tmp_path: Path, form: str) -> None:
    """``cp -r parts/. build/ && bash build/run.sh``: _written compares by last part (``.``, ``build``), not the
    files a folder copy (``cp -r``, ``cp -T``, a link to the folder, ``xargs cp -t``) brings, so the run of
    ``build/run.sh`` is not taken as a script the hook writes and ``parts/run.sh`` stays writable. bash 5 ran
    the planted text."""
    out = proved_edit(tmp_path, {"bash": _FOLDER_COPY[form]}, {"parts/run.sh": "exit 0\n"}, "parts/run.sh", "exit 0",
                _PLANT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 5: writers hookruns does not know
_WRITERS = {
    "xargs sort -o": "find parts -type f | xargs sort -o build/run.sh; bash build/run.sh",
    "uniq IN OUT": "mkdir -p build; find parts -type f | xargs cat | uniq - build/run.sh; bash build/run.sh",
    "shuf -o": "mkdir -p build; find parts -type f | xargs cat | shuf -o build/run.sh; bash build/run.sh",
    "iconv -o": "mkdir -p build; find parts -type f | xargs cat | iconv -t UTF-8 -o build/run.sh; "
                "bash build/run.sh",
}


@pytest.mark.parametrize("form", sorted(_WRITERS))
def test_script_written_by_another_writer_is_unread(tmp_path: Path, form: str) -> None:
    """``find parts -type f | xargs sort -o build/run.sh; bash build/run.sh``: _tool_writes looks at the first
    command word (``xargs``), so sort's ``-o`` behind xargs is missed; ``uniq IN OUT``, ``shuf -o`` and
    ``iconv -o`` are writers it does not list. The script run is what the hook wrote from ``parts/``, whose
    files (named by no word) stay writable. bash 5 ran the planted text."""
    files = {"parts/a": "exit 0\n", "build/run.sh": "exit 0\n"}
    out = proved_edit(tmp_path, {"bash": _WRITERS[form]}, files, "parts/a", "exit 0", _PLANT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 6: code read from a pipe, stdin spelled otherwise
_STDIN_SPELLED = {
    "bash //dev/stdin": "bash //dev/stdin",
    "bash /dev/./stdin": "bash /dev/./stdin",
    "python3 //dev/stdin": "python3 //dev/stdin",
    "bash -c '. //dev/stdin'": "bash -c '. //dev/stdin'",
    "flock sh": "flock /tmp/rt20-hook.lock sh",
    "taskset sh": "taskset 1 sh",
    "setpriv sh": "setpriv sh",
    "rbash": "rbash",
}


@pytest.mark.parametrize("form", sorted(_STDIN_SPELLED))
def test_pipe_into_code_reader_is_unread(tmp_path: Path, form: str) -> None:
    """``find tools -name '*.txt' | xargs cat | bash //dev/stdin``: _from_stdin compares the path's spelling
    (``/dev/stdin``, ``/proc/self/fd/``), so ``//dev/stdin`` and ``/dev/./stdin`` are read as a script file and the
    pipe as data; wrappers not in _WRAPPERS (``flock``, ``taskset``, ``setpriv``) and ``rbash`` hide the shell that
    reads the pipe. ``tools/a.txt`` (named by no word) stays writable and its text runs. bash 5 ran it."""
    command = "find tools -name '*.txt' | xargs cat | " + _STDIN_SPELLED[form]
    tool = _STDIN_SPELLED[form].split()[0]
    plant = "print('PLANTED')" if tool == "python3" else _PLANT
    out = proved_edit(tmp_path, {"bash": command}, {"tools/a.txt": "true\n"}, "tools/a.txt", "true", plant, tool)
    assert out.split() == ["PermissionError"]
