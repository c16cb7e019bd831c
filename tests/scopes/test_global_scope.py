"""scope=global for real: `copier copy` (tasks on) into a plain folder initialises it as a git repository and links
the Copilot-facing files into a temporary $COPILOT_HOME; the real Copilot CLI (1.0.102, offline) lists the linked
instructions and skills and runs the linked hook; `copier update` reaches them through the links; `codeact
uninstall` removes the links and owned files but never a file it did not create."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, make_repo
from tests.copilot.conftest import CopilotRun, default_tools
from tests.copilot.mock_model import call, text
from tests.scopes.conftest import clean_env, run, status

pytestmark = pytest.mark.e2e

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"
LAUNCHER = '"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"'
PROGRAM = 'print(",".join(sorted(glob(pattern="src/*.py"))))'
PROGRAM_OUTPUT = "src/app.py,src/util.py"
FILES = {"README.md": "# work\n", "src/app.py": "# TODO: a\n", "src/util.py": "x = 1\n"}
LINKED = ["instructions/codeact.instructions.md", "instructions/codeact.local.instructions.md",
          "agents/codeact.agent.md", "skills/codeact", "skills/codeact-update", "hooks/codeact.json", "codeact"]


def test_global_scope_links_updates_and_uninstalls(template_src: Path, tmp_path: Path, venv_dir: Path,
                                                   copilot_cli: Callable[..., subprocess.CompletedProcess[str]],
                                                   run_copilot: Callable[..., CopilotRun]) -> None:
    home = tmp_path / "copilot-cli-home"  # HOME of `copilot_cli`; sessions below use it too
    copilot_home = home / ".copilot"
    user = {"HOME": str(home), "COPILOT_HOME": str(copilot_home)}
    env = clean_env(CODEACT_VENV=str(venv_dir), **user)
    mine = copilot_home / "agents" / "codeact.agent.md"  # the user's own file at one of the link paths
    mine.parent.mkdir(parents=True)
    mine.write_text("my own agent\n")
    dest = tmp_path / "dotfiles" / "codeact"  # a plain folder: the copy task makes it a git repository

    tools = [f"tools={json.dumps(default_tools()['tools'])}"] if default_tools() else []
    copy = run(["copier", "copy", "--trust", "--defaults", "--vcs-ref", "HEAD", "-d", "scope=global",
                *[a for t in tools for a in ("-d", t)], str(template_src), str(dest)], tmp_path, env)
    assert copy.returncode == 0, copy.stderr
    assert (dest / ".git").is_dir(), "the copy task initialises the destination as a git repository"
    assert f"left alone: {mine}" in copy.stderr, copy.stderr
    assert mine.read_text() == "my own agent\n" and not mine.is_symlink()
    for rel in LINKED:
        link = copilot_home / rel
        if link != mine:
            assert link.is_symlink() and link.resolve() == (dest / ("." + rel if rel == "codeact" else rel)).resolve()
    assert not (copilot_home / ".git").exists()
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "codeact")

    work = make_repo(tmp_path / "work", FILES)

    def listing(*args: str) -> list[dict[str, Any]]:
        proc = copilot_cli(work, *args, "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    instructions = {Path(e["sourcePath"]).resolve(): e for e in listing("instruction", "list")}
    for name in ("codeact.instructions.md", "codeact.local.instructions.md"):
        entry = instructions[(dest / "instructions" / name).resolve()]
        assert entry["location"] == "user" and not entry.get("defaultDisabled"), entry
    skills = {s["name"]: s for s in listing("skill", "list")}
    for name in ("codeact", "codeact-update"):
        assert skills[name]["enabled"] and Path(skills[name]["path"]) == copilot_home / "skills" / name, skills[name]

    # `copier update` switches enforcement; the user moved their own agent away, so the update links ours too.
    mine.rename(tmp_path / "my-agent.md")
    update = run(["copier", "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                  "-d", "enforcement=exclusive"], dest, env)
    assert update.returncode == 0, update.stderr
    assert "stamped_mode='exclusive'" in (copilot_home / "codeact/hooks/pre-tool-use.sh").read_text()
    assert json.loads((copilot_home / "codeact/settings.json").read_text())["enforcement"] == "exclusive"
    assert mine.is_symlink() and mine.resolve() == (dest / "agents/codeact.agent.md").resolve()
    assert status(dest) == sorted([" M .copier-answers.codeact.yml", " M .codeact/hooks/post-tool-use.sh",
                                   " M .codeact/hooks/pre-tool-use.sh", " M .codeact/hooks/session-start.sh",
                                   " M .codeact/settings.json"]), status(dest)
    git(dest, "commit", "-qam", "codeact: exclusive")

    # A session in another repository: the linked hook denies `view` and lets the quoted launcher run.
    session = run_copilot(work, "List the Python files under src.", [
        call("view", path=str(work / "README.md")),
        call("bash", command=f"{LAUNCHER} run --code '{PROGRAM}'", description="Run a CodeAct program"),
        text("done"),
    ], extra_env=user)
    (view,), (bash,) = [r.tool_results() for r in session.requests[1:]]
    assert view.content.startswith("Denied by preToolUse hook: "), view.content
    assert f"{LAUNCHER} run - <<'PY'" in view.content
    assert PROGRAM_OUTPUT in bash.content and "exit code 0" in bash.content, bash.content
    assert "You are the CodeAct" not in session.requests[0].system  # the agent is offered, not forced
    assert f"{LAUNCHER} run - <<'PY'" in session.requests[0].system  # the linked instructions are in the prompt

    # MCP in global scope: the repository's server and the user's own are discovered on the first run in the
    # repository into this machine's cache (nothing is written into the repository), and reused after that.
    server = [sys.executable, str(SERVERS / "demo_server.py")]
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {"command": server[0], "args": server[1:]}}}))
    git(work, "add", ".mcp.json")
    git(work, "commit", "-qm", "mcp")
    (copilot_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {
        "mine": {"type": "local", "command": server[0], "args": server[1:], "tools": ["echo"]}}}))
    launcher = str(copilot_home / "codeact/bin/codeact")
    cache_env = {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    untrusted = run([launcher, "tools", "--json"], work, cache_env)  # Copilot does not trust `work` yet
    # a run's discovery says one short line; the details go to the log file it names (issue 43.5)
    assert "1 not started (Copilot does not trust the folder) (details: " in untrusted.stderr, untrusted.stderr
    (log,) = (tmp_path / "cache" / "codeact" / "mcp").glob("work-*.discover.log")
    assert "not starting this repository's MCP server(s) demo" in log.read_text()
    assert {"mine.echo"} <= {t["name"] for t in json.loads(untrusted.stdout)}
    # what the CLI's "trust this folder for future sessions" writes, in its own file (`//` comments, then JSON)
    cli_config = copilot_home / "config.json"
    managed = cli_config.read_text() if cli_config.exists() else "{}"
    cli_config.write_text(managed.replace("{", f'{{\n  "trustedFolders": [{json.dumps(str(work))}],', 1))
    first = run([launcher, "run", "--code", 'print(demo.add(a=2, b=3), mine.echo(text="hi", upper=True))'], work,
                cache_env)
    assert first.returncode == 0 and first.stdout == "5 HI\n", first.stderr
    said = [line for line in first.stderr.splitlines() if "discover" in line]
    assert len(said) == 1 and re.fullmatch(r"codeact: MCP servers discovered for this repository: 1 of 1 ok, "
                                           rf"\d+ tool\(s\) \(details: {re.escape(str(log))}\)", said[0]), first.stderr
    assert "discovering 1 MCP server(s)" in log.read_text() and ": demo" in log.read_text()
    (cached,) = (tmp_path / "cache" / "codeact" / "mcp").glob("work-*.lock.json")
    assert set(json.loads(cached.read_text())["servers"]) == {"demo", "mine"}
    listed = run([launcher, "tools", "--json"], work, cache_env)
    names = {t["name"] for t in json.loads(listed.stdout)}
    assert {"demo.add", "demo.profile", "mine.echo", "mcp_call"} <= names and "mine.add" not in names
    assert "discovering" not in listed.stderr, "the second use reads the cache"
    again = run([launcher, "discover"], work, cache_env)
    assert again.returncode == 0 and f"wrote {cached}: 2 server(s)" in again.stdout, again.stdout + again.stderr
    assert status(work) == []

    # The user replaces one link with their own file; uninstall, run through the link from another repository.
    notes = copilot_home / "instructions" / "codeact.local.instructions.md"
    notes.unlink()
    notes.write_text("---\napplyTo: '**'\n---\nmy notes\n")
    tracked = set(subprocess.run(["git", "ls-files"], cwd=dest, capture_output=True, text=True).stdout.split())
    removed = run([str(copilot_home / "codeact/bin/codeact"), "uninstall"], work, env)
    assert removed.returncode == 0, removed.stderr
    assert f"left alone: {notes} is not a codeact link" in removed.stderr, removed.stderr
    assert notes.read_text().endswith("my notes\n")
    for rel in LINKED:
        if copilot_home / rel != notes:
            assert not (copilot_home / rel).is_symlink() and not (copilot_home / rel).exists(), rel
            assert f"removed link {copilot_home / rel}" in removed.stdout
    # folders in $COPILOT_HOME that still hold the user's files stay; those the links leave empty go (issue 26)
    names = {p.name for p in copilot_home.iterdir()}
    assert "instructions" in names and not {"agents", "hooks", "skills"} & names, names
    deleted = {line[3:] for line in status(dest)}
    assert all(line.startswith(" D ") for line in status(dest)), status(dest)
    assert deleted == tracked - {"instructions/codeact.local.instructions.md"}
    assert (dest / "instructions/codeact.local.instructions.md").exists(), "the seeded file is kept"
    assert status(work) == []
