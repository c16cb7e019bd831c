"""scope=plugin for real: the Copilot CLI (1.0.102, offline) installs the stamped plugin from a local marketplace,
lists its skills, offers its agent, and runs its hook from the plugin's folder; the model finds the launcher through
the skill's base directory; the launcher keeps its venv and bytecode out of the plugin's folder."""
from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, make_repo
from tests.copilot.conftest import CopilotRun, default_tools
from tests.copilot.mock_model import ChatRequest, call, text
from tests.scopes.conftest import clean_env, requirements_hash, run, status

MARKETPLACE = "acme-tools"
PROGRAM = 'print(",".join(sorted(glob(pattern="src/*.py"))))'
PROGRAM_OUTPUT = "src/app.py,src/util.py"
FILES = {"README.md": "# work\n", "src/app.py": "# TODO: a\n", "src/util.py": "x = 1\n"}
DENIED = "Denied by preToolUse hook: "
BASE_DIR = re.compile(r"Base directory for this skill: (\S+)")
AGENT_TOOLS = {"bash", "read_bash", "stop_bash", "list_bash", "skill", "sql"}


@pytest.fixture(scope="module")
def marketplace(template_src: Path, tmp_path_factory: pytest.TempPathFactory, venv_dir: Path) -> Path:
    """A committed marketplace repository holding the stamped plugin (enforcement exclusive), its launcher's venv
    prepared in the shared test folder."""
    from copier import run_copy

    repo = make_repo(tmp_path_factory.mktemp("marketplace") / "acme-codeact")
    run_copy(str(template_src), repo, data={"scope": "plugin", "marketplace_name": MARKETPLACE, "plugin_owner": "Acme",
                                            "enforcement": "exclusive", **default_tools()},
             defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "codeact plugin")
    launcher = repo / "plugins/codeact/bin/codeact"
    setup = run([str(launcher), "setup"], repo, clean_env(CODEACT_VENV=str(venv_dir)), timeout=900)
    assert setup.returncode == 0, setup.stderr
    return repo


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def skill_bases(requests: list[ChatRequest]) -> list[str]:
    """Every `Base directory for this skill:` the model was shown."""
    return [b for r in requests for m in r.messages for b in BASE_DIR.findall(message_text(m))]


def untouched(repo: Path) -> None:
    """Nothing was written inside the plugin's folder (ignored files included)."""
    ignored = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout
    assert ignored == "" and status(repo) == [], ignored
    assert not list((repo / "plugins/codeact").rglob("__pycache__"))


def test_launcher_keeps_its_venv_and_bytecode_in_the_user_cache(marketplace: Path, venv_dir: Path,
                                                                tmp_path: Path) -> None:
    plugin = marketplace / "plugins/codeact"
    cache = tmp_path / "xdg-cache"
    # The plugin's default venv is $XDG_CACHE_HOME/codeact/venvs/<requirements hash>: point it at the shared one
    # (installing a fresh venv takes minutes), then run a program in a separate git repository.
    key = requirements_hash(plugin / "requirements.txt")
    (cache / "codeact/venvs").mkdir(parents=True)
    (cache / "codeact/venvs" / key).symlink_to(venv_dir / key, target_is_directory=True)
    work = make_repo(tmp_path / "work", FILES)
    env = clean_env(XDG_CACHE_HOME=str(cache), HOME=str(tmp_path / "home"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # Python writes bytecode: it must land in the cache
    result = run([str(plugin / "bin/codeact"), "run", "--code", PROGRAM], work / "src", env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == PROGRAM_OUTPUT
    assert list((cache / "codeact/pycache").rglob("*.pyc")), "bytecode goes to the user cache"
    untouched(marketplace)
    assert status(work) == []


@pytest.mark.e2e
def test_copilot_installs_the_plugin_and_its_hook_steers_the_model(
        marketplace: Path, copilot_cli: Callable[..., subprocess.CompletedProcess[str]],
        run_copilot: Callable[..., CopilotRun], tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", FILES)
    plugin = (marketplace / "plugins/codeact").resolve()

    def cli(*args: str) -> Any:
        proc = copilot_cli(work, *args)
        assert proc.returncode == 0, f"copilot {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    cli("plugin", "marketplace", "add", str(marketplace))
    installed = cli("plugin", "install", f"codeact@{MARKETPLACE}")
    assert "installed" in installed.lower(), installed
    plugins = {p["name"]: p for p in json.loads(cli("plugin", "list", "--json"))}
    manifest = json.loads((plugin / "plugin.json").read_text())
    assert plugins["codeact"]["marketplace"] == MARKETPLACE and plugins["codeact"]["enabled"] is True
    assert plugins["codeact"]["version"] == manifest["version"]
    skills = {s["name"]: s for s in json.loads(cli("skill", "list", "--json"))}
    for name in ("codeact", "codeact-update"):
        assert skills[name]["source"] == "plugin" and skills[name]["enabled"] is True, skills.get(name)
        assert Path(skills[name]["path"]).resolve() == plugin / "skills" / name

    # The user's Copilot home now has the plugin: sessions use it (HOME and COPILOT_HOME of `copilot_cli`).
    home = tmp_path / "copilot-cli-home"
    user = {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot")}

    def launch_from_skill(request: ChatRequest) -> Any:
        found = skill_bases([request])
        assert found, "the skill did not arrive with its base directory"
        launcher = f"{found[-1]}/../../bin/codeact"
        return call("bash", command=f"{launcher} run --code '{PROGRAM}'", description="Run a CodeAct program")

    session = run_copilot(work, "List the Python files under src.", [
        call("view", path=str(work / "README.md")),
        call("skill", skill="codeact"),
        launch_from_skill,
        text("done"),
    ], extra_env=user)
    (view,), (skill,), (bash,) = [r.tool_results() for r in session.requests[1:]]
    assert view.content.startswith(DENIED), f"the plugin's hook did not fire: {view.content!r}"
    assert f"{plugin}/bin/codeact run - <<'PY'" in view.content, view.content
    bases = skill_bases(session.requests)
    assert Path(bases[-1]).resolve() == plugin / "skills/codeact", bases
    assert PROGRAM_OUTPUT in bash.content and "exit code 0" in bash.content, bash.content

    # The agent is the plugin's, namespaced `codeact:codeact`, with the bash family only.
    agent = run_copilot(work, "Count the Python files.", [text("done")], agent="codeact:codeact", extra_env=user)
    first = agent.requests[0]
    assert "You are the CodeAct agent" in first.system and "load the `codeact` skill" in first.system
    assert set(first.tool_names) == AGENT_TOOLS
    untouched(marketplace)
