"""Exclusive mode's command-line check: only the launcher, alone, with nothing that widens the policy. Only the
shell-level text counts: single-quoted strings and a quoted-delimiter heredoc body may hold anything."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from tests.hook.helpers import LAUNCHER, ROOTED, bash_call, deny_json, hook_env, payload, reason_command, run_sh

W = spec.WHY_TEXT
L = LAUNCHER
R = ROOTED  # "$(git rev-parse --show-toplevel)/.codeact/bin/codeact"
PS = ".codeact/bin/codeact.ps1"
RPS = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact.ps1"'
ROOT = "<root>"  # replaced by the stamped project's absolute path
NASTY = "print(1); x = a | b && c || d; $(rm -rf ~) `id` > /etc/x < /dev/null & \" \\ # {a,b} * ~ !"

# Every accepted form (spec.FORMS), with the options of the closed set.
ALLOWED = [
    f"{L} run --code 'print(1)'",
    f"{R} run --code 'print(1)'",
    f"{R} tools",
    f"{L} doctor",
    f"{L} doctor --json",
    f'{L} run --code "print(1)"',
    f"{L} run --code 'print(1); x = 2 | 3 && y'",
    f"{L} run --code 'a = 1\nb = 2\nprint(a + b)'",
    f"{L} run --code '{NASTY}'",
    f"{L} run - <<'PY'\n{NASTY}\nprint('it''s')\nPY",
    f"{R} run - <<'PY'\nprint('$(x) `y` ; | &&')\nPY\n",
    f"{L} run - <<'PY'\nPY\n",  # empty body
    f"{L} run - <<'PY'\n  PY\nPYx\nxPY\nPY",  # lines that only look like the delimiter
    f"{L} run --json - <<'PY' 2>&1\nprint(1)\nPY",
    f"{L} run --json --code 'print(1)' 2>&1",
    f"  {L} run --code 'print(1)'  \n\n",
    f"{L} run --workspace src --code 'x'",
    f"{L} run --workspace=. --code 'x'",
    f"{L} run --workspace src/ --code 'x'",
    f"{L} run --workspace inside --code 'x'",  # a link that stays inside
    f"{L} run --workspace .github --code 'x'",
    f"{L} run --file src/prog.py",
    f"{L} run --file=src/prog.py --json",
    f"{L} run --timeout 60 --backend monty --code 'x'",
    f"{L} run --timeout 600 --code 'x'",
    f"{L} describe grep",
    f"{L} describe time.get_current_time --json",
    f"{L} tools time",
    f"{L} search weather",
    f"{L} search 'current time' --json",
    f"{L} run --code '{'x' * 5000}'",
    # issue 43.3: the launcher however it is named
    f"./{L} run --code 'print(1)'",
    f"{ROOT}/{L} run --code 'print(1)'",
    f"{ROOT}/{L} tools",
]

DENIED = [
    # variables: the model's only lever in this mode is the command line
    (f"CODEACT_TOOLS=bash {L} run --code 'x'", "assign"),
    (f"CODEACT_DISABLE= {L} run --code 'x'", "assign"),
    (f"XDG_CONFIG_HOME=/tmp/evil {L} run --code 'x'", "assign"),
    ("export CODEACT_TOOLS=bash", "vars"),
    (f"env CODEACT_TOOLS=bash {L} run --code 'x'", "vars"),
    (f"export CODEACT_TOOLS=bash; {L} run --code 'x'", "vars"),
    # chains before and after
    (f"cd /tmp && {L} run --code 'x'", "not_launcher"),
    (f"cd {ROOT}; {L} run --code 'x'", "not_launcher"),
    (f"{L} run --code 'x'; cat /etc/passwd", "form"),
    (f"{L} run --code 'x';cat /etc/passwd", "form"),
    (f"{L} run --code 'x' && rm -rf ~", "form"),
    (f"{L} run --code 'x' || rm -rf ~", "form"),
    (f"{L} run --code 'x' | sh", "form"),
    (f"{L} run --code 'x' |& sh", "form"),
    (f"{L} run --code 'x' & rm -rf ~", "form"),
    (f"{L} run --code 'x'\nrm -rf ~", "form"),
    (f"{L} run --code 'x'\n{L} run --code 'y'", "form"),
    (f"true | {L} run -", "not_launcher"),
    # expansions
    (f"{L} run --code \"$(cat /etc/passwd)\"", "form"),
    (f"{L} run --code $(cat /etc/passwd)", "form"),
    (f"{L} run --code `id`", "form"),
    (f"{L} run --workspace $HOME --code 'x'", "form"),
    (f"{L} run --code 'x'$(id)", "form"),
    (f"{L} run --code \"print('hi!')\"", "form"),  # history expansion in an interactive shell
    (f"{L} run --code \"a\\\"b\"", "form"),
    (f"{L} run --code \"a\\nb\"", "form"),
    (f"$({L}) run", "not_launcher"),
    (f"({L} run --code 'x')", "not_launcher"),
    (f"{{ {L} run --code 'x'; }}", "not_launcher"),
    (f"{L} run --code x # comment", "form"),
    (f"{L} run --code ~/x", "form"),
    (f"{L} run --code 'it'\"'\"'s'", "form"),
    (f"{L} run --code 'x' --json", "form"),  # options go before the program
    # redirections
    (f"{L} run --code 'x' > /etc/passwd", "form"),
    (f"{L} run - < /etc/passwd", "form"),
    (f"{L} run --code 'x' 2>err.txt", "form"),
    (f"{L} run - <(cat /etc/passwd)", "form"),
    # heredocs: only <<'PY', and its body may not hold the PY line
    (f"{L} run - <<'PY'\nprint(1)\nPY\nrm -rf ~", "form"),
    (f"{L} run - <<'PY'\nprint(1)\nPY\nrm -rf ~\nPY", "heredoc_end"),
    (f"{L} run - <<'PY'\nPY\nPY", "heredoc_end"),
    (f"{L} run - <<PY\nprint($(id))\nPY", "form"),
    (f"{L} run - <<\"PY\"\nprint(1)\nPY", "form"),
    (f"{L} run - <<-'PY'\n\tprint(1)\n\tPY", "form"),
    (f"{L} run - <<< 'print(1)'", "form"),
    (f"{L} run - <<'PY' <<'QQ'\nx\nPY\ny\nQQ", "form"),
    # not the launcher
    ("cat README.md", "not_launcher"),
    ("python3 -c 'print(1)'", "not_launcher"),
    (f"bash {L} run --code 'x'", "not_launcher"),
    (f"bash -c '{L} run --code x'", "not_launcher"),
    (f"time {L} run --code 'x'", "not_launcher"),
    (f"exec {L} run --code 'x'", "not_launcher"),
    (f"/tmp/other/{L} run --code 'x'", "not_launcher"),
    (f"{L}-evil run --code 'x'", "not_launcher"),
    (f"x{L} run --code 'x'", "not_launcher"),
    (".codeact/bin/../bin/codeact run --code 'x'", "not_launcher"),
    (f"{ROOT}/../x/{L} run --code 'x'", "not_launcher"),
    (f"{ROOT}/{L} run; id", "form"),  # the launcher by its absolute path: what follows is still checked
    (f"./{L} discover", "user_command"),
    (f"{L}.ps1 run --code 'x'", "not_launcher"),
    ('"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"x run', "not_launcher"),
    ('"$(git rev-parse --show-toplevel; id)/.codeact/bin/codeact" run', "not_launcher"),
    # a CR, VT or FF is not a blank to bash: it becomes part of the first or last word
    (f"\r{L} run --json", "not_launcher"),
    (f" \r{L} run --json", "not_launcher"),
    (f"\x0b{L} run --json", "not_launcher"),
    (f"\x0c{R} doctor", "not_launcher"),
    (f"{L} run --workspace src\r", "form"),
    (f"{L} run --file src/prog.py\x0b", "form"),
    (f"{L} run --code 'x'\r", "form"),
    ("", "empty"),
    ("   \n ", "empty"),
    # subcommands that are the user's
    (f"{L} uninstall --all", "user_command"),
    (f"{R} discover", "user_command"),
    (f"{L} refresh", "user_command"),
    (f"{L} link --remove", "user_command"),
    (f"{L} drift", "user_command"),
    (f"{L} server stop", "user_command"),
    (f"{L} frobnicate", "form"),
    # options outside the closed set
    (f"{L} run --timeout 1e9 --code 'x'", "timeout"),
    (f"{L} run --timeout 601 --code 'x'", "timeout"),
    (f"{L} run --timeout 99999 --code 'x'", "timeout"),
    (f"{L} run --works src --code 'x'", "form"),  # abbreviations are not accepted
    (f"{L} run --backend hyperlight2 --code 'x'", "form"),
    # paths that widen the workspace, lift a protection, or read a program from outside
    (f"{L} run --workspace .git --code 'x'", "protected"),
    (f"{L} run --workspace ./.git/ --code 'x'", "protected"),
    (f"{L} run --workspace .git/../.git --code 'x'", "protected"),
    (f"{L} run --workspace=.GIT --code 'x'", "protected"),
    (f"{L} run --workspace src/.git --code 'x'", "protected"),
    (f"{L} run --workspace .codeact --code 'x'", "protected"),
    (f"{L} run --workspace .codeact/bin --code 'x'", "protected"),
    (f"{L} run --workspace .github/hooks --code 'x'", "protected"),
    (f"{L} run --workspace .github/agents --code 'x'", "protected"),
    (f"{L} run --file .git/config", "protected"),
    (f"{L} run --file=.codeact/hooks/pre-tool-use.sh", "protected"),
    (f"{L} run --workspace .. --code 'x'", "protected"),
    (f"{L} run --workspace ../other --code 'x'", "protected"),
    (f"{L} run --workspace src/../.. --code 'x'", "protected"),
    (f"{L} run --workspace / --code 'x'", "form"),
    (f"{L} run --workspace=/etc --code 'x'", "form"),
    (f"{L} run --workspace {ROOT} --code 'x'", "form"),
    (f"{L} run --workspace '' --code 'x'", "form"),
    (f"{L} run --workspace --code 'x'", "form"),
    (f"{L} run --workspace outside --code 'x'", "outside"),
    (f"{L} run --workspace outside/etc --code 'x'", "outside"),
    (f"{L} run --workspace gitlink --code 'x'", "protected"),  # a link to .git
    (f"{L} run --file /etc/passwd", "form"),
    (f"{L} run --file outside/etc/passwd", "outside"),
    (f"{L} run --code " + "''" * 40000 + "; rm -rf ~", "form"),  # slow-down attempts: a timeout allows
]

PS_ALLOWED = [
    f"& {PS} run --code 'print(1); x | y && $(z)'",
    f"& {RPS} run --code 'print(1)'",
    f"& {PS} tools",
    f"& {PS} run --code 'it''s'",
    f"& {PS} run --code @'\nprint(\"a\"); $x | y `z`\n'@",
    f"& {PS} run --json --code @'\nprint(1)\n'@",
    f"& {PS} run --code 'x' 2>&1",
    f"& {PS} run --workspace src --code 'x'",
]

PS_DENIED = [
    (f"& {PS} run --code 'x'; Remove-Item -Recurse ~", "form"),
    (f"$env:CODEACT_TOOLS='bash'; & {PS} run --code 'x'", "not_launcher"),
    (f"& {PS} run --code \"$(Get-Content x)\"", "form"),
    (f"& {PS} run --code @'\nx\n'@; Remove-Item x", "form"),
    (f"& {PS} run --code @'\nx\n  '@; Remove-Item x\n'@", "heredoc_end"),
    (f"& {PS} run --code @\"\nx\n\"@", "form"),
    (f"& {PS} run --code \u2019x\u2019; rm x", "smart_quotes"),
    (f"& {PS} run --code 'x\u2019; rm x; \u2018'", "smart_quotes"),
    (f"& {PS} run --code 'x' | Out-File y", "form"),
    (f"& {PS} run --code a,b", "form"),
    (f"& {PS} run --code 'x'\nRemove-Item y", "form"),
    (f"& {PS} run --% --code x", "form"),
    (f"& {PS} run --workspace C:\\Windows --code 'x'", "form"),
    (f"& {PS} run --workspace ../other --code 'x'", "protected"),
    (f"& {PS} uninstall --all", "user_command"),
    ("Get-Content README.md", "not_launcher"),
    (f"& {L} run --code 'x'", "not_launcher"),
    (f"& {PS} run --code 'x' > out.txt", "form"),
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
    assert result.out == deny_json(reason_command(W[why])), result.out and result.reason.split(". Run ONLY")[0]


@pytest.mark.parametrize("command", PS_ALLOWED)
def test_powershell_allowed(command: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, payload("powershell", {"command": _cmd(command, repo)}), hook_env(state))
    assert (result.rc, result.out) == (0, ""), result.out and result.reason.split(". Run ONLY")[0]


@pytest.mark.parametrize("command,why", PS_DENIED)
def test_powershell_denied(command: str, why: str, repo: Path, state: Path) -> None:
    result = run_sh(repo, payload("powershell", {"command": _cmd(command, repo)}), hook_env(state))
    assert result.rc == 0
    assert result.out == deny_json(reason_command(W[why], shell="ps")), \
        result.out and result.reason.split(". Run ONLY")[0]


def _fill(prefix: str, unit: str, suffix: str = "", limit: int = 130_000) -> str:
    """``prefix + unit * n + suffix`` with the largest n whose payload stays under the hook's 128 KB limit."""
    n = limit // len(unit)
    while len(bash_call(prefix + unit * n + suffix)) > limit:
        n = int(n * 0.95)
    return prefix + unit * n + suffix


SLOW_DOWN = {  # the CLI lets a call through when its hook times out (5 s): no input may come close
    "empty quotes": (_fill(f"{L} run --code ", "''", "; rm -rf ~"), "form"),
    "redirections": (_fill(f"{L} run ", "2>&1 ", "; rm -rf ~"), "form"),
    "options": (_fill(f"{L} run", " --json"), None),
    "options, then junk": (_fill(f"{L} run", " --json", " x"), "form"),
    "double quotes": (_fill(f"{L} run --code ", '"a"'), "form"),
    "single quotes": (_fill(f"{L} run --code '", "a;$(x)|", "'"), None),
    "heredoc, escapes": (_fill(f"{L} run - <<'PY'\n", "\\\"\\\\'$(x)|;\n", "PY"), None),
    "heredoc, near-delimiters": (_fill(f"{L} run - <<'PY'\n", "PYx\n PY\t\n", "PY\n"), None),
    "heredoc, delimiter inside": (_fill(f"{L} run - <<'PY'\n", "x\n", "PY\nrm -rf ~\nPY"), "heredoc_end"),
    "powershell quotes": (_fill(f"& {PS} run --code '", "''a", "'"), None),
}


@pytest.mark.parametrize("name", list(SLOW_DOWN))
def test_inputs_at_the_size_limit_are_decided_fast(name: str, repo: Path, state: Path) -> None:
    import time

    command, why = SLOW_DOWN[name]
    tool = "powershell" if command.startswith("&") else "bash"
    start = time.perf_counter()
    result = run_sh(repo, payload(tool, {"command": command}), hook_env(state))
    elapsed = time.perf_counter() - start
    assert result.out == ("" if why is None else deny_json(reason_command(W[why], shell="ps" if tool == "powershell"
                                                                                   else "sh")))
    assert elapsed < 2.5, f"{elapsed:.2f} s"
