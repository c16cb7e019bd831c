"""The three scopes render from the same template files: each puts exactly its layout's files where layout.py says,
the plugin's manifests are valid, the shared text is the same text, and global refuses to live in $COPILOT_HOME."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import frontmatter
import pytest
import yaml

from codeact.enforcement import spec
from codeact.layout import LAYOUTS, SCOPES, for_scope
from tests.conftest import REPO_ROOT, git, make_repo
from tests.scopes.conftest import clean_env, run, schema_errors, status

ANSWERS = {"repo": {}, "global": {}, "plugin": {"plugin_owner": "Acme Tools", "marketplace_name": "acme"}}
OPTIONAL = {".github/workflows/codeact-drift.yml", ".github/workflows/codeact-update.yml", ".pre-commit-config.yaml"}


def stamped_files(project: Path) -> set[str]:
    out = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=project, capture_output=True,
                         text=True, check=True).stdout.split()
    return set(out)


@pytest.fixture(scope="module")
def projects(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One stamped destination per scope (enforcement exclusive), not committed."""
    from copier import run_copy

    found = {}
    for scope in SCOPES:
        dest = make_repo(tmp_path_factory.mktemp(scope) / "dest")
        run_copy(str(template_src), dest, data={"scope": scope, "enforcement": "exclusive", **ANSWERS[scope]},
                 defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
        found[scope] = dest
    return found


@pytest.mark.parametrize("scope", SCOPES)
def test_each_scope_stamps_exactly_its_layout(scope: str, projects: dict[str, Path]) -> None:
    layout = for_scope(scope)
    files = stamped_files(projects[scope])
    stray = {f for f in files if not layout.is_owned(f) and not layout.is_seeded(f)}
    assert not stray, f"{scope}: files outside the layout (add them to layout.py): {sorted(stray)}"
    for item in layout.owned + layout.seeded:
        if item in OPTIONAL:
            continue
        assert any(f == item or (item.endswith("/") and f.startswith(item)) for f in files), f"{scope}: {item} missing"
    expected_instructions = {"repo": 2, "global": 2, "plugin": 0}[scope]
    assert len([f for f in files if f.endswith(".instructions.md")]) == expected_instructions
    launcher = projects[scope] / layout.project_launcher
    assert launcher.is_file() and launcher.stat().st_mode & 0o111
    assert (projects[scope] / layout.codeact_dir / "hooks/pre-tool-use.sh").stat().st_mode & 0o111
    settings = json.loads((projects[scope] / layout.codeact_dir / "settings.json").read_text())
    assert settings["scope"] == scope
    answers = yaml.safe_load((projects[scope] / ".copier-answers.codeact.yml").read_text())
    assert answers["scope"] == scope
    assert not {"codeact_dir", "launcher_command", "hook_script"} & set(answers), "computed answers are not recorded"
    for rel in files:
        if "/runtime/" in rel:
            continue  # the runtime, byte-identical to runtime/ (tests/template/test_render.py)
        text = (projects[scope] / rel).read_text()
        assert "{%" not in text and ("{{" not in text or rel.endswith(".yml")), f"{rel}: unrendered Jinja"
        assert text.endswith("\n") and not text.endswith("\n\n"), f"{scope}: {rel} must end with one newline"


def test_global_scope_uses_the_names_copilot_reads_in_its_home(projects: dict[str, Path]) -> None:
    files = stamped_files(projects["global"])
    assert {"instructions/codeact.instructions.md", "agents/codeact.agent.md", "skills/codeact/SKILL.md",
            "skills/codeact-update/SKILL.md", "hooks/codeact.json"} <= files
    assert not any(f.startswith(".github/") for f in files), "drift workflow is off by default in global scope"
    for home_rel, rel in LAYOUTS["global"].links:
        assert (projects["global"] / rel).exists(), f"link target {rel} is not stamped"


def test_plugin_manifests_are_valid(projects: dict[str, Path]) -> None:
    root = projects["plugin"]
    market = json.loads((root / ".github/plugin/marketplace.json").read_text())
    assert schema_errors(market, "marketplace") == []
    assert market["name"] == "acme" and market["owner"] == {"name": "Acme Tools"}
    (entry,) = market["plugins"]
    plugin_dir = root / entry["source"]
    manifest = json.loads((plugin_dir / "plugin.json").read_text())
    assert schema_errors(manifest, "plugin") == []
    assert manifest["name"] == entry["name"] == "codeact"
    assert manifest["version"] == entry["version"] == market["metadata"]["version"]
    for key in ("agents", "skills"):
        assert (plugin_dir / manifest[key]).is_dir()
    hooks = json.loads((plugin_dir / manifest["hooks"]).read_text())
    assert schema_errors(hooks, "hooks") == []  # the wrapper form: a bare map in a FILE is ignored by the CLI
    (hook,) = hooks["hooks"]["preToolUse"]
    # a missing script allows (exit 0) under any sh: VS Code runs the entry with /bin/sh, where a failed `.` exits 2
    assert hook["bash"] == '[ ! -f "${COPILOT_PLUGIN_ROOT}/hooks/pre-tool-use.sh" ] || . "${COPILOT_PLUGIN_ROOT}/hooks/pre-tool-use.sh"'
    assert (plugin_dir / "hooks/pre-tool-use.sh").is_file()
    assert not list(plugin_dir.rglob("*.instructions.md")), "plugins cannot carry instructions"


def test_the_schemas_catch_what_the_cli_would_let_through() -> None:
    good = {"name": "codeact", "description": "d", "version": "1.0.0", "agents": "agents/", "skills": "skills/",
            "hooks": "hooks.json"}
    assert schema_errors(good, "plugin") == []
    for bad in ({**good, "name": "CodeAct"}, {**good, "description": "x" * 1025}, {**good, "version": "1"},
                {**good, "hooks": {"version": 1, "hooks": {}}}, {**good, "agent": "agents/"},
                {**good, "skills": "../elsewhere"}):
        assert schema_errors(bad, "plugin"), bad
    assert schema_errors({"preToolUse": []}, "hooks"), "a bare event map is not a hooks file"
    market = {"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "p", "source": "plugins/p", "version": "1.0.0",
                                                                "description": "d"}]}
    assert schema_errors(market, "marketplace"), "a source must start with ./"


@pytest.mark.parametrize("scope", SCOPES)
def test_hooks_files_are_valid_in_every_scope(scope: str, projects: dict[str, Path]) -> None:
    hooks = json.loads((projects[scope] / for_scope(scope).hooks_file).read_text())
    assert schema_errors(hooks, "hooks") == []


def _section(text: str, start: str) -> str:
    return text[text.index(start):]


def test_scopes_share_one_text(projects: dict[str, Path]) -> None:
    """Same template files: past the scope-specific launcher paragraph, the skill and the agent read the same in
    every scope once each scope's launcher command is replaced by a placeholder."""
    def normalised(scope: str, rel: str) -> str:
        layout = for_scope(scope)
        text = (projects[scope] / rel.format(skills=layout.skills_dir, agents=layout.agents_dir)).read_text()
        text = text.replace(layout.launcher_command, "LAUNCHER")
        text = re.sub(r"<!-- codeact:mcp-tools:(begin|end)[^\n]*-->\n", "", text)  # repo scope: MCP from the lock
        return re.sub(r"## MCP tools\n.*?(?=\n## |\Z)", "## MCP tools\n", text, flags=re.S)

    for rel, start in (("{skills}/codeact/SKILL.md", "Run a program"),
                       ("{skills}/codeact/references/patterns.md", "")):
        texts = {scope: _section(normalised(scope, rel), start) for scope in SCOPES}
        assert texts["repo"] == texts["global"] == texts["plugin"], rel
    # the agent: repo and global scope load the instructions with it, so it does not repeat them (issue 43.7); the
    # plugin, which has no instructions, carries the whole text
    agents = {scope: _section(normalised(scope, "{agents}/codeact.agent.md"), "Plan the whole task") for scope in SCOPES}
    assert agents["repo"] == agents["global"] and "## Tools" not in agents["repo"]
    assert "## Tools" in agents["plugin"] and "## Python subset" in agents["plugin"]
    skill = (projects["plugin"] / "plugins/codeact/skills/codeact/SKILL.md").read_text()
    assert "Base directory for this skill:" in skill and "<plugin>/bin/codeact run - <<'PY'" in skill
    agent = frontmatter.load(projects["plugin"] / "plugins/codeact/agents/codeact.agent.md")
    assert agent["name"] == "codeact" and agent["tools"] == list(spec.AGENT_TOOLS)
    assert "load the `codeact` skill" in agent.content
    assert "are namespaces in the sandbox" in agent.content and "discovering them the first time" in agent.content


@pytest.mark.parametrize("where", ["inside", "equal", "parent"])
def test_global_destination_must_stay_out_of_copilot_home(where: str, template_src: Path, tmp_path: Path) -> None:
    home = tmp_path / "home" / ".copilot"
    home.mkdir(parents=True)
    (home / "config.json").write_text("{}\n")
    dest = {"inside": home / "codeact-src", "equal": home, "parent": tmp_path / "home"}[where]
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    result = run(["copier", "copy", "--trust", "--defaults", "--vcs-ref", "HEAD", "-d", "scope=global",
                  str(template_src), str(dest)], tmp_path, clean_env(COPILOT_HOME=str(home)))
    assert result.returncode == 1, result.stderr
    assert "Validation error" in result.stderr and "COPILOT_HOME" in result.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert not (home / ".git").exists()


def test_plugin_and_global_drift_and_uninstall(stamp, tmp_path: Path) -> None:
    """drift knows each scope's owned and seeded files; uninstall removes exactly the owned ones."""
    import os
    import sys

    def codeact(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**clean_env(), "PYTHONPATH": str(REPO_ROOT / "runtime"), "COPILOT_HOME": str(tmp_path / "no-home")}
        return subprocess.run([sys.executable, "-m", "codeact", *args, "--workspace", str(project)], cwd=project,
                              capture_output=True, text=True, env=env, timeout=120)

    for scope, answers in (("plugin", ANSWERS["plugin"]), ("global", {})):
        project = stamp(tmp_path / scope, scope=scope, precommit_hook=True, **answers)
        git(project, "add", "-A")
        git(project, "commit", "-qm", "codeact")
        assert codeact(project, "drift").returncode == 0, codeact(project, "drift").stdout
        layout = for_scope(scope)
        skill = project / layout.skills_dir / "codeact/SKILL.md"
        skill.write_text(skill.read_text() + "hand edit\n")
        (project / ".pre-commit-config.yaml").write_text("repos: []\n")  # seeded: never drift
        result = codeact(project, "drift", "--json")
        found = {(d["kind"], d["path"]) for d in json.loads(result.stdout)["drift"]}
        assert result.returncode == 1 and found == {("edited", f"{layout.skills_dir}/codeact/SKILL.md")}, found
        git(project, "checkout", "-q", "--", ".")
        tracked = set(subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True).stdout.split())
        result = codeact(project, "uninstall")
        assert result.returncode == 0, result.stderr
        # the seeded pre-commit config stays, without CodeAct's hook (issue 41.6: it would run the removed launcher)
        precommit = " M .pre-commit-config.yaml"
        changed = status(project)
        assert precommit in changed and "codeact-drift" not in (project / ".pre-commit-config.yaml").read_text()
        deleted = {line[3:] for line in changed if line != precommit}
        assert all(line.startswith(" D ") for line in changed if line != precommit), changed
        assert deleted == {p for p in tracked if layout.is_owned(p) or p == ".copier-answers.codeact.yml"}
        assert (project / ".pre-commit-config.yaml").exists() and (project / "README.md").exists()
        if scope == "global":
            assert (project / "instructions/codeact.local.instructions.md").exists(), "seeded file kept"
        assert os.listdir(project / ".git")
