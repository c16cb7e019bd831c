"""The PowerShell hook mirrors the bash hook: same tables, same exact output. Runs where `pwsh` is installed (it is
not installable on this machine kind: Debian has no powershell package, and the dotnet tool needs a .NET SDK);
a tree-sitter parse checks its syntax everywhere tree-sitter-powershell is installed."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hook import test_hook_exclusive as excl
from tests.hook import test_hook_payloads as payloads
from tests.hook.helpers import (
    HOOK_PS1,
    bash_call,
    deny_json,
    for_ps1,
    hook_env,
    payload,
    reason_command,
    reason_nudge,
    run_ps1,
)

# Cases where the two hooks differ by design: bytes the bash hook reads as Latin-1 but .NET as UTF-8, and a payload
# size limit counted in bytes (bash) or UTF-16 units (.NET) - both still end in the same decision kind.
PS_SKIP = {"binary bytes", "NUL bytes around a call"}


def test_powershell_hook_parses(stamped: Callable[..., Path]) -> None:
    ts = pytest.importorskip("tree_sitter")
    tsp = pytest.importorskip("tree_sitter_powershell")
    parser = ts.Parser(ts.Language(tsp.language()))
    for mode in ("off", "exclusive"):
        source = (stamped(enforcement=mode) / HOOK_PS1).read_bytes()
        tree = parser.parse(source)
        errors: list[str] = []

        def walk(node: object) -> None:
            if node.type == "ERROR" or node.is_missing:  # type: ignore[attr-defined]
                errors.append(f"{node.start_point}: {source[node.start_byte:node.end_byte][:60]!r}")  # type: ignore
            for child in node.children:  # type: ignore[attr-defined]
                walk(child)

        walk(tree.root_node)
        assert not errors, errors
    assert parser.parse(b"function f { if ($x) { 'a' }\n").root_node.has_error  # the check can fail


@pytest.mark.parametrize("mode", ["off", "nudge", "exclusive"])
@pytest.mark.parametrize("case", [c for c in payloads.CASES if c not in PS_SKIP])
def test_payload(case: str, mode: str, stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    stdin, expected = payloads.CASES[case]
    result = run_ps1(stamped(enforcement="exclusive"), stdin, hook_env(state, mode), pwsh)
    assert (result.rc, result.out) == (0, for_ps1(expected[mode])), result.err


@pytest.mark.parametrize("command", excl.ALLOWED)
def test_allowed(command: str, stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    repo = stamped(enforcement="exclusive")
    result = run_ps1(repo, bash_call(command.replace(excl.ROOT, str(repo))), hook_env(state), pwsh)
    assert (result.rc, result.out) == (0, ""), result.err


@pytest.mark.parametrize("command,why", excl.DENIED)
def test_denied(command: str, why: str, stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    repo = stamped(enforcement="exclusive")
    result = run_ps1(repo, bash_call(command.replace(excl.ROOT, str(repo))), hook_env(state), pwsh)
    assert (result.rc, result.out) == (0, deny_json(reason_command(why))), result.err


@pytest.mark.parametrize("command", excl.PS_ALLOWED)
def test_powershell_allowed(command: str, stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    repo = stamped(enforcement="exclusive")
    stdin = payload("powershell", {"command": command.replace(excl.ROOT, str(repo))})
    assert (run_ps1(repo, stdin, hook_env(state), pwsh).out) == ""


@pytest.mark.parametrize("command,why", excl.PS_DENIED)
def test_powershell_denied(command: str, why: str, stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    repo = stamped(enforcement="exclusive")
    stdin = payload("powershell", {"command": command.replace(excl.ROOT, str(repo))})
    assert run_ps1(repo, stdin, hook_env(state), pwsh).out == deny_json(reason_command(why, shell="ps"))


def test_nudge(stamped: Callable[..., Path], state: Path, pwsh: str) -> None:
    repo = stamped(enforcement="nudge")
    env = hook_env(state)
    view = payload("view", {"path": "a"}, session="ps")
    outs = [run_ps1(repo, s, env, pwsh).out for s in [view] * 4 + [payload("report_intent", {}, session="ps"), view,
                                                                  bash_call("ls", session="ps"), view]]
    assert outs == ["", "", "", deny_json(reason_nudge(shell="ps")), "", "", "", ""]


def test_an_unusable_state_folder_allows(stamped: Callable[..., Path], tmp_path: Path, pwsh: str) -> None:
    repo = stamped(enforcement="nudge")
    env = hook_env(tmp_path / "missing-xdg", extra={"TMPDIR": str(tmp_path / "missing-tmp"),
                                                     "TEMP": str(tmp_path / "missing-tmp")})
    assert [run_ps1(repo, payload("view", {"path": "a"}), env, pwsh).out for _ in range(5)] == [""] * 5
