"""Exclusive mode's command-line check: only the launcher, alone, with nothing that widens the policy. Only the
shell-level text counts: single-quoted strings and a quoted-delimiter heredoc body may hold anything."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.hook.helpers import (LAUNCHER, WHY_AFTER_HEREDOC, WHY_ASSIGN, WHY_CHAIN, WHY_DELIM, WHY_EMPTY, WHY_EXPAND,
                                WHY_NOT_LAUNCHER, WHY_PS_ARRAY, WHY_PS_HERESTRING, WHY_REDIRECT, WHY_SECOND_LINE,
                                WHY_SMART_QUOTES, WHY_SUBSHELL, WHY_SYNTAX, WHY_TOO_COMPLEX, WHY_TWO_HEREDOCS,
                                WHY_UNQUOTED_HEREDOC, WHY_VARS, bash_call, deny_json, hook_env, payload,
                                reason_command, run_sh, why_path)

L = LAUNCHER
ROOT = "<root>"  # replaced by the stamped project's absolute path
NASTY = "print(1); x = a | b && c || d; $(rm -rf ~) `id` > /etc/x < /dev/null & ' \" \\ # {a,b} * ~ !"

ALLOWED = [
    f"{L} run --code 'print(1)'",
    f"./{L} run --code 'print(1)'",
    f"{ROOT}/{L} tools",
    f"bash {L} run --code 'x = 1'",
    f"sh ./{L} doctor",
    f"/bin/sh {L} doctor --json",
    f"'{L}' run --code 'print(1)'",
    f'"./{L}" run --code "print(1)"',
    f"{L} run --code 'print(1); x = 2 | 3 && y'",
    f"{L} run --code 'a = 1\nb = 2\nprint(a + b)'",
    f"{L} run --code 'it'\"'\"'s' --json",  # 'it'"'"'s': quotes joined into one word
    f"{L} run - <<'PY'\n{NASTY.replace(chr(39), '')}\nPY",
    f"{L} run - <<'PY'\nprint('$(x) `y` ; | &&')\nPY\n",
    f"{L} run - <<'PY'\nPY\n",  # empty body
    f"{L} run -<<'PY'\nprint(1)\nPY",
    f"{L} run - << 'PY'\nprint(1)\nPY",
    f'{L} run - <<"PY"\nprint($x)\nPY',
    f"{L} run - <<\\PY\nprint(`x`)\nPY",
    f"{L} run - <<-'PY'\n\tprint(1)\n\tPY",
    f"{L} run - <<PY\nprint(1)\nPY",  # unquoted, but nothing in the body expands
    f"{L} run - <<'PY'\nprint(1)",  # no closing line: the body runs to the end, like bash
    f"{L} run - <<'PY' --json\nprint(1)\nPY",
    f"{L} run - <<< 'print(1); x | y'",
    f"{L} run --json --code 'print(1)' 2>&1",
    f"{L} run --code 'print(1)' 2>/dev/null",
    f"{L} run \\\n  --code 'print(1)'",
    f"  {L} run --code 'print(1)'  \n\n",
    f"{L} run --workspace src --code 'x'",
    f"{L} run --workspace=. --code 'x'",
    f"{L} run --workspace {ROOT} --code 'x'",
    f"{L} run --workspace {ROOT}/src --code 'x'",
    f"{L} run --workspace src/ --code 'x'",
    f"{L} run --workspace inside --code 'x'",  # a link that stays inside
    f"{L} run --workspace src/.. --code 'x'",
    f"{L} run --file src/prog.py",
    f"{L} run --fi=src/prog.py",
    f"{L} run --timeout 60 --backend monty --code 'x'",
    f"{L} describe grep",
    f"{L} run --code '{'x' * 5000}'",
]

DENIED = [
    # variables: the model's only lever in this mode is the command line
    (f"CODEACT_TOOLS=bash {L} run --code 'x'", WHY_ASSIGN),
    (f"CODEACT_DISABLE= {L} run --code 'x'", WHY_ASSIGN),
    (f"XDG_CONFIG_HOME=/tmp/evil {L} run --code 'x'", WHY_ASSIGN),
    ("export CODEACT_TOOLS=bash", WHY_VARS),
    (f"export CODEACT_TOOLS=bash; {L} run --code 'x'", WHY_CHAIN),
    (f"env CODEACT_TOOLS=bash {L} run --code 'x'", WHY_VARS),
    (f"export CODEACT_TOOLS=bash\n{L} run --code 'x'", WHY_SECOND_LINE),
    # chains before and after
    (f"cd /tmp && {L} run --code 'x'", WHY_CHAIN),
    (f"cd {ROOT}; {L} run --code 'x'", WHY_CHAIN),
    (f"{L} run --code 'x'; cat /etc/passwd", WHY_CHAIN),
    (f"{L} run --code 'x';cat /etc/passwd", WHY_CHAIN),
    (f"{L} run --code 'x' && rm -rf ~", WHY_CHAIN),
    (f"{L} run --code 'x' || rm -rf ~", WHY_CHAIN),
    (f"{L} run --code 'x' | sh", WHY_CHAIN),
    (f"{L} run --code 'x' |& sh", WHY_CHAIN),
    (f"{L} run --code 'x' & rm -rf ~", WHY_CHAIN),
    (f"{L} run --code 'x'\nrm -rf ~", WHY_SECOND_LINE),
    (f"true | {L} run -", WHY_CHAIN),
    # expansions
    (f"{L} run --code \"$(cat /etc/passwd)\"", WHY_SYNTAX),
    (f"{L} run --code $(cat /etc/passwd)", WHY_EXPAND),
    (f"{L} run --code `id`", WHY_EXPAND),
    (f"{L} run --workspace $HOME --code 'x'", WHY_EXPAND),
    (f"{L} run --code 'x'$(id)", WHY_EXPAND),
    (f"{L} run --code \"print('hi!')\"", WHY_SYNTAX),  # history expansion in an interactive shell
    (f"{L} run --code \"a\\\"b\"", WHY_SYNTAX),
    (f"$({L}) run", WHY_EXPAND),
    (f"({L} run --code 'x')", WHY_SUBSHELL),
    (f"{{ {L} run --code 'x'; }}", WHY_SYNTAX),
    (f"{L} run --code x # comment", WHY_SYNTAX),
    (f"{L} run --code ~/x", WHY_SYNTAX),
    (f"{L} run --code *", WHY_SYNTAX),
    (f"{L} run --code {{a,b}}", WHY_SYNTAX),
    (f"{L} run --code a\\;b", WHY_SYNTAX),
    # redirections
    (f"{L} run --code 'x' > /etc/passwd", WHY_REDIRECT),
    (f"{L} run --code 'x' >> out.txt", WHY_REDIRECT),
    (f"{L} run - < /etc/passwd", WHY_REDIRECT),
    (f"{L} run --code 'x' 2>&1x", WHY_REDIRECT),
    (f"{L} run --code 'x' 2>err.txt", WHY_REDIRECT),
    (f"{L} run - <(cat /etc/passwd)", WHY_REDIRECT),
    (f"{L} run --workspace 0<<'PY' /etc\nx\nPY", WHY_REDIRECT),
    # heredocs that end early or expand
    (f"{L} run - <<'PY'\nprint(1)\nPY\nrm -rf ~", WHY_AFTER_HEREDOC),
    (f"{L} run - <<'PY'\nprint(1)\nPY\nrm -rf ~\nPY", WHY_AFTER_HEREDOC),
    (f"{L} run - <<'PY'\nprint(1)\n  PY  \nrm -rf ~\nPY", WHY_AFTER_HEREDOC),  # looser than bash: still denied
    (f"{L} run - <<-'PY'\nprint(1)\n\tPY\nrm -rf ~", WHY_AFTER_HEREDOC),
    (f"{L} run - <<PY\nprint($(id))\nPY", WHY_UNQUOTED_HEREDOC),
    (f"{L} run - <<PY\nprint(`id`)\nPY", WHY_UNQUOTED_HEREDOC),
    (f"{L} run - <<PY\nprint('\\n')\nPY", WHY_UNQUOTED_HEREDOC),
    (f"{L} run - <<'PY'x\nx\nPYx\nrm -rf ~", WHY_DELIM),
    (f"{L} run - <<'PY' <<'QQ'\nx\nPY\ny\nQQ", WHY_TWO_HEREDOCS),
    (f"{L} run - <<'P Y'\nx\nP Y", WHY_REDIRECT),
    # not the launcher
    ("cat README.md", WHY_NOT_LAUNCHER),
    ("python3 -c 'print(1)'", WHY_NOT_LAUNCHER),
    (f"bash -c '{L} run --code x'", WHY_NOT_LAUNCHER),
    (f"time {L} run --code 'x'", WHY_NOT_LAUNCHER),
    (f"exec {L} run --code 'x'", WHY_NOT_LAUNCHER),
    (f"/tmp/other/{L} run --code 'x'", WHY_NOT_LAUNCHER),
    (f"{L}-evil run --code 'x'", WHY_NOT_LAUNCHER),
    (f"x{L} run --code 'x'", WHY_NOT_LAUNCHER),
    (".codeact/bin/../bin/codeact run --code 'x'", WHY_NOT_LAUNCHER),
    (f"{L}.ps1 run --code 'x'", WHY_NOT_LAUNCHER),
    ("", WHY_EMPTY),
    ("   \n ", WHY_EMPTY),
    # paths that widen the workspace, or read a program from outside
    (f"{L} run --workspace / --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace=/etc --code 'x'", why_path("--workspace")),
    (f"{L} run --works / --code 'x'", why_path("--works")),
    (f"{L} run --w=/ --code 'x'", why_path("--w")),
    (f"{L} run --workspace .. --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace ../other --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace src/../.. --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace '' --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace outside --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace {ROOT}/outside/etc --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace {ROOT}/.. --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace {ROOT}x --code 'x'", why_path("--workspace")),
    (f"{L} run --workspace", why_path("--workspace")),
    (f"{L} discover --workspace /other/repo", why_path("--workspace")),
    (f"{L} run --file /etc/passwd", why_path("--file")),
    (f"{L} run --fi=/etc/passwd", why_path("--fi")),
    (f"{L} run --file outside/etc/passwd", why_path("--file")),
    (f"{L} run " + "a " * 70, WHY_TOO_COMPLEX),
    (f"{L} run --code " + "''" * 40000 + "; rm -rf ~", WHY_TOO_COMPLEX),  # slow-down attempts: a timeout allows
    (f"{L} run " + "2>&1 " * 20000 + "; rm -rf ~", WHY_TOO_COMPLEX),
    (f"{L} run --code " + "'x'\"y\"" * 40 + " --json", WHY_TOO_COMPLEX),
]

PS_ALLOWED = [
    f"& {L}.ps1 run --code 'print(1); x | y && $(z)'",
    f"{L}.ps1 tools",
    f".\\.codeact\\bin\\codeact.ps1 run --code 'it''s'",
    f"& '.codeact\\bin\\codeact.ps1' doctor",
    f"& .CodeAct/bin/CODEACT.ps1 doctor",
    f"& {L}.ps1 run --code @'\nprint(\"a\"); $x | y `z`\n'@",
    f"& {L}.ps1 run --code @'\nprint(1)\n'@ --json",
    f"& {L}.ps1 run --code 'x' 2>&1",
    f"& {L} run --code 'x'",  # the POSIX launcher, from pwsh on Linux or macOS
    f"& {L}.ps1 run --workspace src --code 'x'",
    f"& {ROOT}/{L}.ps1 tools",
]

PS_DENIED = [
    (f"& {L}.ps1 run --code 'x'; Remove-Item -Recurse ~", WHY_CHAIN),
    (f"$env:CODEACT_TOOLS='bash'; & {L}.ps1 run --code 'x'", WHY_EXPAND),
    (f"& {L}.ps1 run --code \"$(Get-Content x)\"", WHY_SYNTAX),
    (f"& {L}.ps1 run --code @'\nx\n'@; Remove-Item x", WHY_CHAIN),
    (f"& {L}.ps1 run --code @'\nx\n  '@; Remove-Item x\n'@", WHY_CHAIN),
    (f"& {L}.ps1 run --code @\"\nx\n\"@", WHY_PS_HERESTRING),
    (f"& {L}.ps1 run --code \u2019x\u2019; rm x", WHY_SMART_QUOTES),
    (f"& {L}.ps1 run --code 'x' | Out-File y", WHY_CHAIN),
    (f"& {L}.ps1 run --code a,b", WHY_PS_ARRAY),
    (f"& {L}.ps1 run --code 'x'\nRemove-Item y", WHY_SECOND_LINE),
    (f"& {L}.ps1 run --code x`; y", WHY_EXPAND),
    (f"& {L}.ps1 run --% --code x", WHY_SYNTAX),
    (f"& {L}.ps1 run --workspace C:\\Windows --code 'x'", why_path("--workspace")),
    (f"& {L}.ps1 run --workspace ..\\other --code 'x'", why_path("--workspace")),
    ("Get-Content README.md", WHY_NOT_LAUNCHER),
    (f"& {L}.ps1 run --code 'x' > out.txt", WHY_REDIRECT),
]


def _cmd(template: str, repo: Path) -> str:
    return template.replace(ROOT, str(repo))


@pytest.fixture(scope="module")
def repo(stamped: Callable[..., Path]) -> Path:
    return stamped(enforcement="exclusive")


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, bash_call(_cmd(command, repo)), hook_env(state))
    assert (result.rc, result.out) == (0, ""), result.out and result.reason.split(". Run ONLY")[0]


@pytest.mark.parametrize("command,why", DENIED)
def test_denied(command: str, why: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, bash_call(_cmd(command, repo)), hook_env(state))
    assert result.rc == 0
    assert result.out == deny_json(reason_command(why)), result.out and result.reason.split(". Run ONLY")[0]


@pytest.mark.parametrize("command", PS_ALLOWED)
def test_powershell_allowed(command: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, payload("powershell", {"command": _cmd(command, repo)}), hook_env(state))
    assert (result.rc, result.out) == (0, ""), result.out and result.reason.split(". Run ONLY")[0]


@pytest.mark.parametrize("command,why", PS_DENIED)
def test_powershell_denied(command: str, why: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, payload("powershell", {"command": _cmd(command, repo)}), hook_env(state))
    assert result.rc == 0
    assert result.out == deny_json(reason_command(why, shell="ps")), \
        result.out and result.reason.split(". Run ONLY")[0]


def test_the_launcher_by_its_physical_path(repo: Path, state: Path, tmp_path: Path) -> None:
    """A repository reached through a symlink: the real path of the launcher is accepted too."""
    link = tmp_path / "link"
    link.symlink_to(repo)
    env = hook_env(state)
    result = subprocess_run_via(link, bash_call(f"{repo.resolve()}/{L} tools"), env)
    assert (result.rc, result.out) == (0, "")
    result = subprocess_run_via(link, bash_call(f"{link}/{L} tools"), env)
    assert (result.rc, result.out) == (0, "")


def subprocess_run_via(cwd: Path, stdin: str, env: dict[str, str]):  # noqa: ANN201
    return run_sh(cwd, stdin, env)


def _fill(prefix: str, unit: str, suffix: str = "", limit: int = 130_000) -> str:
    """``prefix + unit * n + suffix`` with the largest n whose payload stays under the hook's 128 KB limit."""
    n = limit // len(unit)
    while len(bash_call(prefix + unit * n + suffix)) > limit:
        n = int(n * 0.95)
    return prefix + unit * n + suffix


SLOW_DOWN = {  # the CLI lets a call through when its hook times out (5 s): no input may come close
    "empty quotes": (_fill(f"{L} run --code ", "''", "; rm -rf ~"), WHY_TOO_COMPLEX),
    "redirections": (_fill(f"{L} run ", "2>&1 ", "; rm -rf ~"), WHY_TOO_COMPLEX),
    "words": (_fill(f"{L} run ", "a "), WHY_TOO_COMPLEX),
    "double quotes": (_fill(f"{L} run --code ", '"a"'), WHY_TOO_COMPLEX),
    "heredoc, escapes": (_fill(f"{L} run - <<'PY'\n", "\\\"\\\\'$(x)|;\n", "PY"), None),
    "heredoc, near-delimiters": (_fill(f"{L} run - <<'PY'\n", "PYx\n PY\t\n", "PY\n"), WHY_AFTER_HEREDOC),
    "line continuations": (_fill(f"{L} run ", " \\\n"), None),
}


@pytest.mark.parametrize("name", list(SLOW_DOWN))
def test_inputs_at_the_size_limit_are_decided_fast(name: str, repo: Path, state: Path) -> None:
    import time

    command, why = SLOW_DOWN[name]
    start = time.perf_counter()
    result = run_sh(repo, bash_call(command), hook_env(state))
    elapsed = time.perf_counter() - start
    assert result.out == ("" if why is None else deny_json(reason_command(why)))
    assert elapsed < 2.5, f"{elapsed:.2f} s"
