"""Nudge mode: per session, the 4th read-only call in a row is denied; its state folder; fail-safe behaviour when
that folder cannot be used; the debug log."""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.hook.helpers import LAUNCHER, bash_call, deny_json, hook_env, payload, reason_nudge, run_sh

NUDGE = deny_json(reason_nudge())


@pytest.fixture(scope="module")
def repo(stamped: Callable[..., Path]) -> Path:
    return stamped(enforcement="nudge")


def call(tool: str, session: str | None = "s-1", shape: str = "camel") -> str:
    if tool in ("bash", "Bash"):
        args = {"command": f"{LAUNCHER} run --code 'print(1)'"}
    else:
        args = {"path": "README.md"}
    return payload(tool, args, session=session, shape=shape)


def outputs(repo: Path, env: dict[str, str], calls: list[str]) -> list[str]:
    out = []
    for stdin in calls:
        result = run_sh(repo, stdin, env)
        assert result.rc == 0 and result.err == "", result
        out.append(result.out)
    return out


def denied_at(outs: list[str]) -> list[int]:
    assert set(outs) <= {"", NUDGE}
    return [i for i, out in enumerate(outs) if out]


def test_the_fourth_read_in_a_row_is_denied_then_counting_restarts(repo: Path, state: Path) -> None:
    reads = ["view", "glob", "grep", "view", "glob", "rg", "read_file", "file_search", "list_dir"]
    assert denied_at(outputs(repo, hook_env(state), [call(t) for t in reads])) == [3, 7]


def test_claude_names_count_as_reads(repo: Path, state: Path) -> None:
    reads = ["Read", "Glob", "Grep", "LS", "NotebookRead"]
    assert denied_at(outputs(repo, hook_env(state), [call(t, shape="claude") for t in reads])) == [3]


@pytest.mark.parametrize("breaker", ["bash", "edit", "create", "task", "web_fetch", "some-mcp-tool", "Bash"])
def test_any_other_call_breaks_the_run(breaker: str, repo: Path, state: Path) -> None:
    calls = [call("view")] * 3 + [call(breaker)] + [call("view")] * 4
    assert denied_at(outputs(repo, hook_env(state), calls)) == [7]


@pytest.mark.parametrize("neutral", ["report_intent", "update_todo", "skill", "read_bash", "list_bash", "stop_bash"])
def test_housekeeping_neither_counts_nor_breaks(neutral: str, repo: Path, state: Path) -> None:
    calls = [call("view"), call(neutral), call("view"), call(neutral), call("view"), call(neutral), call("view")]
    assert denied_at(outputs(repo, hook_env(state), calls)) == [6]


def test_sessions_count_separately(repo: Path, state: Path) -> None:
    calls = [call("view", "A"), call("view", "B")] * 3 + [call("view", "A"), call("view", "B"), call("view", "C")]
    assert denied_at(outputs(repo, hook_env(state), calls)) == [6, 7]


def test_without_a_session_id_the_parent_process_is_the_session(repo: Path, state: Path) -> None:
    assert denied_at(outputs(repo, hook_env(state), [call("view", session=None)] * 4)) == [3]


def test_32_concurrent_sessions_keep_separate_counts(repo: Path, state: Path) -> None:
    env = hook_env(state)

    def session(n: int) -> list[str]:
        return outputs(repo, env, [call("view", f"concurrent-{n}")] * 5)

    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(session, range(32)))
    assert [denied_at(outs) for outs in results] == [[3]] * 32


def test_parallel_reads_in_one_session_lose_no_count(repo: Path, state: Path) -> None:
    """Parallel tool calls of one turn: each read is one atomic append, so none is lost."""
    env = hook_env(state)
    with ThreadPoolExecutor(max_workers=8) as pool:
        outs = list(pool.map(lambda _: run_sh(repo, call("view", "par"), env).out, range(8)))
    assert all(o in ("", NUDGE) for o in outs)
    # However the 8 interleaved, at least 3 reads are on record now (each either counted or was the deny that
    # reset), so at most 3 more reads pass before the next deny.
    more = outputs(repo, env, [call("view", "par")] * 4)
    assert NUDGE in more


@pytest.mark.parametrize("session", ["../../x", "/etc/passwd", "a/b/../../c", "..", ".", "a\\b", "x" * 10_000,
                                     "\u00e9\u6f22", "a b\tc", "nudge-other", ""])
def test_hostile_session_ids_stay_in_the_state_folder(session: str, repo: Path, state: Path) -> None:
    outs = outputs(repo, hook_env(state), [call("view", session)] * 4)
    assert denied_at(outs) == [3]
    folder = state / f"codeact-{os.getuid()}"
    assert sorted(p.name for p in state.iterdir()) == [folder.name]
    names = [p.name for p in folder.iterdir()]
    assert len(names) == 1 and names[0].startswith("nudge-") and "/" not in names[0] and len(names[0]) <= 140
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_the_state_folder_falls_back_to_tmpdir(repo: Path, state: Path, tmp_path: Path) -> None:
    env = hook_env(state, extra={"XDG_RUNTIME_DIR": str(tmp_path / "missing")})
    assert denied_at(outputs(repo, env, [call("view")] * 4)) == [3]
    assert (state / f"codeact-{os.getuid()}").is_dir()


def test_an_unusable_state_folder_allows_everything(repo: Path, state: Path) -> None:
    (state / f"codeact-{os.getuid()}").write_text("a file where the folder should be")
    assert outputs(repo, hook_env(state), [call("view")] * 6) == [""] * 6


def test_a_linked_state_folder_is_not_trusted(repo: Path, state: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state / f"codeact-{os.getuid()}").symlink_to(elsewhere)
    assert outputs(repo, hook_env(state), [call("view")] * 6) == [""] * 6
    assert list(elsewhere.iterdir()) == []


def test_a_missing_temp_folder_allows_everything(repo: Path, tmp_path: Path) -> None:
    env = hook_env(tmp_path / "missing")
    assert outputs(repo, env, [call("view")] * 6) == [""] * 6


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to simulate a full disk")
def test_a_full_disk_allows_everything(repo: Path, state: Path) -> None:
    folder = state / f"codeact-{os.getuid()}"
    folder.mkdir(mode=0o700)
    (folder / "nudge-full").symlink_to("/dev/full")
    assert outputs(repo, hook_env(state), [call("view", "full")] * 6) == [""] * 6


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_state_folder_allows_everything(repo: Path, state: Path) -> None:
    folder = state / f"codeact-{os.getuid()}"
    folder.mkdir(mode=0o500)
    try:
        assert outputs(repo, hook_env(state), [call("view")] * 6) == [""] * 6
    finally:
        folder.chmod(0o700)


def test_debug_log_in_the_state_folder(repo: Path, state: Path) -> None:
    env = hook_env(state, extra={"CODEACT_DEBUG": "1"})
    outs = outputs(repo, env, [call("view")] * 4 + [bash_call(f"{LAUNCHER} tools")])
    assert denied_at(outs) == [3]
    lines = (state / f"codeact-{os.getuid()}" / "debug.log").read_text().splitlines()
    assert len(lines) == 5
    assert "mode=nudge allow tool=view: read 1 in a row" in lines[0]
    assert "mode=nudge deny tool=view: CodeAct nudge" in lines[3]
    assert "allow tool=bash: breaks the run of reads" in lines[4]


def test_debug_log_at_a_given_path_and_for_internal_problems(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "hook.log"
    env = hook_env(tmp_path / "missing", extra={"CODEACT_DEBUG": str(log)})
    assert outputs(repo, env, [call("view"), "garbage"]) == ["", ""]
    text = log.read_text()
    assert "allow tool=view: no state folder" in text
    assert "allow tool=?: no tool name in the payload (7 bytes)" in text


def test_no_debug_output_by_default(repo: Path, state: Path) -> None:
    outputs(repo, hook_env(state), [call("view")] * 4 + ["garbage"])  # asserts empty stderr
    assert not list(state.rglob("debug.log"))


def test_exclusive_mode_keeps_no_state(stamped: Callable[..., Path], state: Path) -> None:
    repo = stamped(enforcement="exclusive")
    outputs(repo, hook_env(state), [call("view"), call("bash"), call("report_intent")])
    assert list(state.iterdir()) == []
