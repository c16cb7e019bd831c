"""Round 20's hook-run findings 1-4, read without a sandbox: variables a command sets again (or only maybe, or in
another shell), arrays, node's ``require('.')``, and ``-c``/``-e`` code that starts a process by an argument list;
each spelling bash (node, python) accepts is protected or Unread, while ordinary hooks leave ordinary files
writable."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeact.core import hookruns

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")


def _protected(tmp_path: Path, command: str, target: str, files: dict[str, str], cwd: str = ".") -> bool:
    """Whether the hook ``command`` (run in ``cwd``) makes ``target`` a script it runs (or its file Unread)."""
    for name, text in {**files, target: "exit 0\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / cwd).mkdir(parents=True, exist_ok=True)
    try:
        targets = hookruns.targets_in([{"type": "command", "bash": command, "cwd": cwd}], str(tmp_path))
    except hookruns.Unread:
        return True
    return hookruns.matches(targets, hookruns.fold(str(tmp_path / target)), True)


_NAME = {"tools/name": "evil\n", "tools/guard.sh": "exit 0\n"}
_SET_AGAIN = [
    ("T=guard; IFS= read -r T < tools/name; bash tools/${T}.sh", "tools/evil.sh"),
    ("T=guard; readarray -t T < tools/name; bash tools/$T.sh", "tools/evil.sh"),
    ("T=guard; for T in guard evil; do :; done; bash tools/$T.sh", "tools/evil.sh"),
    ("T=guard; printf -vT %s evil; bash tools/$T.sh", "tools/evil.sh"),
    ("T=guard; read -aT < tools/name; bash tools/$T.sh", "tools/evil.sh"),
    ("T=guard; declare T=evil; bash tools/$T.sh", "tools/evil.sh"),
    ("T=guard; eval 'read T' < tools/name; bash tools/$T.sh", "tools/evil.sh"),
    ("T=gu; T+=ard; T+=x; bash tools/$T.sh", "tools/guardx.sh"),
    ("T=guard; unset -v T; bash tools/run$T.sh", "tools/run.sh"),
    ("T=; : ${T:=evil}; bash tools/${T:-guard}.sh", "tools/evil.sh"),
    ("T=; bash tools/run${T:-x}.sh", "tools/runx.sh"),
    ("T=1; : $((T=2)); bash tools/run$T.sh", "tools/run2.sh"),
    ('T=1; echo "$((T++))"; bash tools/run$T.sh', "tools/run2.sh"),
    ("T=1; (( T = T + 1 )); bash tools/run$T.sh", "tools/run2.sh"),
    ("T=1; let 'T=T*2'; bash tools/run$T.sh", "tools/run2.sh"),
    ("declare -i T=1+1; bash tools/run$T.sh", "tools/run2.sh"),
    ("declare -u T=evil; bash tools/$T.sh", "tools/EVIL.sh"),
    ("T=guard true; bash tools/run$T.sh", "tools/run.sh"),
    ("(T=guard); bash tools/run$T.sh", "tools/run.sh"),
    ("[ -f nope ] && T=guard; bash tools/run$T.sh", "tools/run.sh"),
    ("if false; then T=guard; fi; bash tools/run$T.sh", "tools/run.sh"),
    ("T=guard | cat; bash tools/run$T.sh", "tools/run.sh"),
    ("T=guard; bash -c 'bash tools/run$T.sh'", "tools/run.sh"),
    ("f() { T=evil; }; T=guard; f; bash tools/$T.sh", "tools/evil.sh"),
    ("for T in guard; do T=evil; done; bash tools/$T.sh", "tools/evil.sh"),
    ("for T in evil; do :; done; for T in guard; do :; done; bash tools/$T.sh", "tools/guard.sh"),
    ("T=./tools/gu; T+=ard.sh; $T", "tools/guard.sh"),
    ('A=( tools ); bash "$A/evil.sh"', "tools/evil.sh"),
    ('declare -a A=(tools); bash "$A/evil.sh"', "tools/evil.sh"),
    ('A[0]=tools; bash "$A/evil.sh"', "tools/evil.sh"),
    ('A=x; A=(tools); bash "$A/evil.sh"', "tools/evil.sh"),
]


@pytest.mark.parametrize(("command", "target"), _SET_AGAIN)
def test_a_variable_set_otherwise_is_not_its_literal(tmp_path: Path, command: str, target: str) -> None:
    """bash 5 runs ``target`` for each: a variable set more than once, by a command, only maybe, in another
    shell or as an array is no literal's value."""
    assert _protected(tmp_path, command, target, _NAME)


def test_an_entrys_env_value_set_again_by_the_command_is_not_read(tmp_path: Path) -> None:
    """``{"env": {"T": "guard"}, "bash": "read -r T < tools/name; bash tools/$T.sh"}``: the command's read wins."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools/name").write_text("evil\n")
    entry = {"type": "command", "bash": "read -r T < tools/name; bash tools/$T.sh", "env": {"T": "guard"}}
    with pytest.raises(hookruns.Unread):
        hookruns.targets_in([entry], str(tmp_path))


@pytest.mark.parametrize(("code", "cwd", "target"), [
    ("require('./')", ".", "index.js"), ("require('../')", "web", "index.js"), ('require(".")', ".", "index.js"),
    ("require(`..`)", "web", "index.js"), ("require('./.')", ".", "index.js"), ("require('.')", ".", "lib/main.js"),
    ("require('../web/..')", "web", "index.js")])
def test_node_code_requiring_a_folder_protects_what_it_loads(tmp_path: Path, code: str, cwd: str,
                                                             target: str) -> None:
    files = {"web/.keep": "", "package.json": '{"main": "lib/main.js"}' if target == "lib/main.js" else "{}"}
    assert _protected(tmp_path, f"node -e {code!r}" if "'" not in code else f'node -e "{code}"', target, files, cwd)


@pytest.mark.parametrize("command", [
    "python3 -c \"__import__('subprocess').run(['bash','tools/check'])\"",
    "python3 -c \"import os; os.spawnlp(os.P_WAIT, 'bash', 'bash', 'tools/check')\"",
    "python3 -c \"import os; os.system('bash '+'tools/check')\"",
    "python3 -c \"import subprocess; subprocess.run(['bash', 'tools/' + 'check'])\"",
    "python3 -c \"import subprocess, os; subprocess.run(['bash', os.path.join('tools', 'check')])\"",
    "python3 -c \"import subprocess; subprocess.run(['bash', 'tools/che' 'ck'])\"",
    "python3 -c \"import subprocess; subprocess.run(['bash', 'tools\\\\x2fcheck'])\"",
    "python3 -c \"import pty; pty.spawn(['bash', 'tools/check'])\"",
    "python3 -c \"import subprocess; d='tools'; subprocess.run(['bash', f'{d}/check'])\"",
    "node -e \"require('child_process').spawnSync('bash', ['tools/check'], {stdio: 'inherit'})\"",
    "node -e 'require(\"child_process\").execFileSync(\"bash\",[\"tools/check\"])'",
    "node -e \"const d='tools';require('child_process').execFileSync('bash',[`${d}/check`])\"",
    "perl -e \"system('bash', 'tools/check')\"",
])
def test_a_script_eval_code_starts_by_its_literals_is_protected(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "tools/check", {})


@pytest.mark.parametrize("command", [
    "for f in a b; do echo $f; done", "T=x; echo $T", 'python3 -c "print(1)"',
    "node -e \"console.log(require('./package.json').name)\"", "x=1; ((x++)); echo $x",
    "python3 -c \"import subprocess; subprocess.run(['echo', 'hi'])\"", "D=tools; bash $D/lint.sh",
])
def test_ordinary_hooks_leave_ordinary_files_writable(tmp_path: Path, command: str) -> None:
    """The fixes above read no more than they must: ``src/app.js`` is no script of these hooks."""
    files = {"package.json": '{"name": "p"}', "index.js": "", "tools/lint.sh": ""}
    assert not _protected(tmp_path, command, "src/app.js", files)
    if command.startswith("D="):
        assert _protected(tmp_path, command, "tools/lint.sh", files)
        assert not _protected(tmp_path, command, "tools/other.sh", files)
