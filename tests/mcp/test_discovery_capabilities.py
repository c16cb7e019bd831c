"""Tools a server registers only for clients that declare sampling/elicitation (as the Copilot CLI does) are listed
as not offered, with that reason, instead of missing silently (issue 28.4)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp_helpers import PY, SERVERS

from codeact.cli import main as cli
from codeact.mcp.discovery import CLI_ONLY_REASON, discover
from codeact.mcp.lock import lock_path

CAPABILITY = str(SERVERS / "capability_server.py")
REPO_ROOT = Path(__file__).resolve().parents[2]


def test_a_server_listed_as_before_is_started_once_and_keeps_its_cli_only_tools(workspace, tmp_path: Path) -> None:
    caps, extra = tmp_path / "caps.jsonl", tmp_path / "extra"
    root = workspace({"cap": {"command": PY, "args": [CAPABILITY], "env": {"CAP_LOG": str(caps),
                                                                          "CAP_EXTRA": str(extra)}}})

    def discovered() -> tuple[list[str], list[str]]:
        """A discovery's capability declarations (one per session) and the lock entry it wrote."""
        before = len(caps.read_text().splitlines()) if caps.exists() else 0
        assert discover(root, timeout=30).outcomes["cap"].status == "ok"
        entry = json.loads(lock_path(root).read_text())["servers"]["cap"]
        assert [d["name"] for d in entry["dropped"]] == ["ask_model", "ask_user"]  # as the CLI would see them
        return caps.read_text().splitlines()[before:], [t["name"] for t in entry["tools"]]

    sessions, tools = discovered()  # the first discovery lists it twice: as CodeAct connects, then as the CLI does
    assert len(sessions) == 2 and tools == ["echo"]
    text = lock_path(root).read_text()
    sessions, tools = discovered()  # unchanged: its first listing is the lock's, the second is not asked again
    assert sessions == ["{}"] and lock_path(root).read_text() == text
    extra.write_text("")  # the server now offers more with the same configuration: listed twice again
    sessions, tools = discovered()
    assert len(sessions) == 2 and tools == ["echo", "extra"]


def npm_bin(name: str) -> Path | None:
    """``name`` under ``$CODEACT_TEST_NPM_PREFIX`` (an ``npm install --prefix`` folder) or the CI's npm cache."""
    for prefix in filter(None, [os.environ.get("CODEACT_TEST_NPM_PREFIX"), str(REPO_ROOT / ".ci-cache" / "npm")]):
        path = Path(prefix) / "node_modules" / ".bin" / name
        if path.exists():
            return path
    return None


def test_tools_only_for_sampling_clients_are_listed_with_the_reason(workspace, tmp_path: Path, capsys) -> None:
    caps = tmp_path / "caps.jsonl"
    root = workspace({"cap": {"command": PY, "args": [CAPABILITY], "env": {"CAP_LOG": str(caps)}},
                      "filtered": {"command": PY, "args": [CAPABILITY], "tools": ["echo", "ask_user"]}})
    assert cli(["discover", "--workspace", str(root)]) == 0
    printed = capsys.readouterr()
    out = printed.out + printed.err
    entry = json.loads(lock_path(root).read_text())["servers"]["cap"]
    assert entry["status"] == "ok" and [t["name"] for t in entry["tools"]] == ["echo"]
    assert entry["dropped"] == [{"name": "ask_model", "reason": CLI_ONLY_REASON},
                                {"name": "ask_user", "reason": CLI_ONLY_REASON}]
    # one session as CodeAct connects (no capability), one as the CLI does (sampling and elicitation, no roots)
    declared = sorted(json.dumps(json.loads(line), sort_keys=True) for line in caps.read_text().splitlines())
    assert declared == ['{"elicitation": {"form": {}, "url": {}}, "sampling": {}}', "{}"]  # the CLI's, exactly
    assert "tool 'ask_model' dropped: offered only to clients that declare sampling and elicitation" in out
    # the tools filter applies to them as to any tool
    filtered = json.loads(lock_path(root).read_text())["servers"]["filtered"]
    assert [d["name"] for d in filtered["dropped"]] == ["ask_user"]
    assert cli(["tools", "--workspace", str(root)]) == 0
    listing = capsys.readouterr()
    text = listing.out + listing.err
    assert f"cap.ask_model: not offered ({CLI_ONLY_REASON})" in text, text
    assert "cap.list_roots" not in text  # the CLI declares no roots: nothing to say about it


def test_a_failing_cli_style_listing_is_said_not_hidden(workspace, tmp_path: Path) -> None:
    # a server that starts once only: the second session (as the CLI connects) fails at once
    marker = tmp_path / "started"
    script = tmp_path / "once.py"
    script.write_text("import os, runpy, sys\n"
                      f"m = {str(marker)!r}\n"
                      "if os.path.exists(m): sys.exit(3)\n"
                      "open(m, 'w').close()\n"
                      f"runpy.run_path({CAPABILITY!r}, run_name='__main__')\n")
    root = workspace({"once": {"command": PY, "args": [str(script)]}})
    report = discover(root, timeout=30)
    outcome = report.outcomes["once"]
    assert outcome.status == "ok" and outcome.tools, outcome
    assert any("listing it as the Copilot CLI connects" in n and "are not known" in n for n in outcome.notes), \
        outcome.notes


def test_server_everything_lists_its_sampling_and_elicitation_tools(workspace) -> None:
    everything = npm_bin("mcp-server-everything")
    if everything is None:
        pytest.skip("npm install --prefix PREFIX @modelcontextprotocol/server-everything and set "
                    "CODEACT_TEST_NPM_PREFIX=PREFIX (or install it into .ci-cache/npm)")
    root = workspace({"everything": {"command": str(everything), "args": []}})
    report = discover(root, timeout=60)
    outcome = report.outcomes["everything"]
    assert outcome.status == "ok", outcome.reason
    dropped = {d["name"]: d["reason"] for d in outcome.dropped}
    assert {"trigger-sampling-request", "trigger-elicitation-request"} <= set(dropped), dropped
    assert dropped["trigger-sampling-request"] == CLI_ONLY_REASON
    assert "echo" in {t["name"] for t in outcome.tools}
    entry = json.loads(lock_path(root).read_text())["servers"]["everything"]
    assert {"trigger-sampling-request", "trigger-elicitation-request"} <= {d["name"] for d in entry["dropped"]}


def test_a_server_that_runs_once_at_a_time_is_listed_both_ways(workspace, tmp_path: Path) -> None:
    # like a server holding a database file: a second instance refuses to start while the first one runs
    lock = tmp_path / "running"
    script = tmp_path / "single.py"
    script.write_text("import atexit, os, runpy, sys\n"
                      f"m = {str(lock)!r}\n"
                      "try:\n    os.close(os.open(m, os.O_CREAT | os.O_EXCL))\n"
                      "except FileExistsError:\n    sys.exit(3)\n"
                      "atexit.register(os.remove, m)\n"
                      f"runpy.run_path({CAPABILITY!r}, run_name='__main__')\n")
    root = workspace({"single": {"command": PY, "args": [str(script)]}})
    outcome = discover(root, timeout=30).outcomes["single"]
    assert outcome.status == "ok" and [t["name"] for t in outcome.tools] == ["echo"], outcome
    assert [d["name"] for d in outcome.dropped] == ["ask_model", "ask_user"], outcome.notes
