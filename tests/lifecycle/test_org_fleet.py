"""Organisations and fleets (issue 16): policy files, fork tags, seeded files, drift of owned folders, messages."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import GIT_ENV, git, make_repo

TOOLS = '["view","create","edit","glob","grep"]'
ANSWERS = ".copier-answers.codeact.yml"
UPDATE = ["update", "-a", ANSWERS, "--trust", "--defaults", "--skip-tasks"]
POLICY = "enforcement: exclusive\ntools:\n  forbidden: [bash]\n  required: [view]\nbackend: [monty, hyperlight]\n"


def copier(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["copier", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=300)


def codeact(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=project, capture_output=True, text=True,
                          env=env, timeout=300)


def drift_kinds(project: Path, *args: str) -> tuple[int, list[dict[str, str]]]:
    result = codeact(project, "drift", "--json", *args)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)["drift"]


def commit_all(project: Path, message: str = "stamp") -> None:
    git(project, "add", "-A")
    git(project, "commit", "-qm", message)


@pytest.fixture(autouse=True)
def _env(venv_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))


@pytest.fixture(scope="module")
def fork(tmp_path_factory) -> Path:
    """An organisation's fork of the template: codeact-policy.yml at its root, tagged under its own epoch."""
    from tests.conftest import snapshot_template

    repo = snapshot_template(tmp_path_factory.mktemp("fork"), tag="v0.2.0")
    (repo / "codeact-policy.yml").write_text(POLICY)
    git(repo, "add", "codeact-policy.yml")
    git(repo, "commit", "-qm", "acme policy")
    git(repo, "tag", "v1!0.2.0")
    return repo


def stamp(template: Path, dest: Path, *data: str, ref: str = "HEAD") -> subprocess.CompletedProcess[str]:
    make_repo(dest)
    args = ["copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", ref]
    for item in data:
        args += ["-d", item]
    return copier(dest, *args, str(template), ".")


# --- bad answers and printed commands ------------------------------------------------------------------------------

def test_a_bad_choice_prints_the_validation_message_not_a_traceback(template_src, tmp_path):
    result = stamp(template_src, tmp_path / "p", "backend=bogus")
    assert result.returncode == 1
    assert "Validation error for question 'backend': 'bogus'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "p/.codeact").exists(), "nothing is written"


def test_post_copy_message_prints_an_update_command_that_needs_no_terminal(template_src, tmp_path):
    result = stamp(template_src, tmp_path / "p", f"tools={TOOLS}")
    assert result.returncode == 0, result.stderr
    updates = [line for line in result.stderr.splitlines() if "copier update" in line]
    assert updates[0] == "Update later with: copier update -a .copier-answers.codeact.yml --trust --defaults"
    commit_all(tmp_path / "p")
    command = updates[0].split(": ", 1)[1].split()
    ran = subprocess.run(command, cwd=tmp_path / "p", capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         env={**os.environ, **GIT_ENV}, timeout=300)
    assert ran.returncode == 0, ran.stderr  # no TTY, as a model's bash tool runs it


def test_a_local_template_path_with_a_workflow_warns_at_copy_and_says_what_to_do(template_src, tmp_path):
    result = stamp(template_src, tmp_path / "p", f"tools={TOOLS}", "drift_workflow=true")
    assert result.returncode == 0, result.stderr
    assert f"WARNING: the template source {template_src} is a folder of this machine" in result.stderr
    assert "drift workflow clones it on a CI runner" in result.stderr and "can never pass" in result.stderr
    assert "copier copy --trust --defaults --overwrite -a .copier-answers.codeact.yml URL ." in result.stderr
    quiet = stamp(template_src, tmp_path / "q", f"tools={TOOLS}", "drift_workflow=false", "update_workflow=false")
    assert quiet.returncode == 0 and "WARNING" not in quiet.stderr


def test_copier_run_without_being_installed_says_how_to_install_it(template_src, tmp_path):
    """As after `uvx --with copier-template-extensions copier copy`: no `copier` on PATH for the printed commands."""
    dest = make_repo(tmp_path / "p")
    bare = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "copier").exists())
    result = subprocess.run([sys.executable, "-m", "copier", "copy", "--trust", "--defaults", "--skip-tasks",
                             "--vcs-ref", "HEAD", str(template_src), "."], cwd=dest, capture_output=True, text=True,
                            env={**os.environ, **GIT_ENV, "PATH": bare}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "install it once with `uv tool install copier --with copier-template-extensions`" in result.stderr
    with_copier = stamp(template_src, tmp_path / "q")
    assert "install it once" not in with_copier.stderr


# --- organisation policy -------------------------------------------------------------------------------------------

def test_policy_refuses_a_breaking_answer_on_copy_and_update(fork, tmp_path):
    refused = stamp(fork, tmp_path / "a", "enforcement=off")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "Validation error for question 'enforcement':" in refused.stderr and "exclusive" in refused.stderr
    tools = stamp(fork, tmp_path / "b", 'tools=["view","bash"]')
    assert tools.returncode == 1 and "Validation error for question 'tools':" in tools.stderr
    assert "[bash] forbidden" in tools.stderr

    project = tmp_path / "c"
    ok = stamp(fork, project)
    assert ok.returncode == 0, ok.stderr
    settings = json.loads((project / ".codeact/settings.json").read_text())
    assert settings["enforcement"] == "exclusive" and settings["backend"] == "monty"  # defaults within the policy
    assert "bash" not in settings["tools"] and "view" in settings["tools"]
    commit_all(project)
    update = copier(project, *UPDATE, "-d", "enforcement=off")
    assert update.returncode == 1 and "Validation error for question 'enforcement':" in update.stderr
    assert json.loads((project / ".codeact/settings.json").read_text())["enforcement"] == "exclusive"


def test_drift_names_each_answer_that_breaks_the_recorded_policy(fork, tmp_path):
    project = tmp_path / "p"
    assert stamp(fork, project).returncode == 0
    commit_all(project)
    assert drift_kinds(project) == (0, [])
    answers = project / ANSWERS
    answers.write_text(answers.read_text().replace("enforcement: exclusive", "enforcement: 'off'")
                       .replace("backend: monty", "backend: auto"))
    commit_all(project, "escape the policy by hand")
    code, found = drift_kinds(project)
    policy = [d for d in found if d["kind"] == "policy"]
    assert code == 1
    assert any("'enforcement'" in d["detail"] for d in policy) and any("'backend'" in d["detail"] for d in policy)


def test_an_answers_file_edited_to_break_the_policy_is_repaired_by_the_printed_fix_and_by_a_plain_update(
        fork, tmp_path):
    """Issue 27: both failed with "Validation error" (the old version's copy re-validated the recorded answers)."""
    def broken(dest: Path) -> Path:
        assert stamp(fork, dest, 'tools=["view","grep","sql"]').returncode == 0
        commit_all(dest)
        answers = dest / ANSWERS
        answers.write_text(answers.read_text().replace("enforcement: exclusive", "enforcement: 'off'")
                           .replace("backend: monty", "backend: auto"))
        commit_all(dest, "escape the policy by hand")
        return dest

    project = broken(tmp_path / "p")
    code, found = drift_kinds(project)
    fixes = sorted(d["detail"].split("put the policy's value back with `", 1)[1].split("`", 1)[0]
                   for d in found if d["kind"] == "policy")
    assert code == 1 and len(fixes) == 2, found
    for fix in fixes:
        ran = subprocess.run(shlex.split(fix) + ["--skip-tasks"], cwd=project, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, env={**os.environ, **GIT_ENV}, timeout=300)
        assert ran.returncode == 0, ran.stderr
        if git(project, "status", "--porcelain"):  # the first fix also puts the other answer back
            commit_all(project, fix)
    answers = yaml.safe_load((project / ANSWERS).read_text())
    assert (answers["enforcement"], answers["backend"]) == ("exclusive", "monty")
    assert answers["tools"] == ["view", "grep", "sql"], "the other answers are kept"
    assert drift_kinds(project) == (0, [])

    # What the weekly update workflow and Renovate run:
    plain = broken(tmp_path / "q")
    ran = copier(plain, "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-answered", "--skip-tasks")
    assert ran.returncode == 0, ran.stderr
    answers = yaml.safe_load((plain / ANSWERS).read_text())
    assert (answers["enforcement"], answers["backend"]) == ("exclusive", "monty")
    settings = json.loads((plain / ".codeact/settings.json").read_text())
    assert (settings["enforcement"], settings["backend"]) == ("exclusive", "monty")
    commit_all(plain, "update")
    assert drift_kinds(plain) == (0, [])


def test_policy_from_the_org_template_catches_a_repo_that_points_at_upstream(template_src, fork, tmp_path):
    project = tmp_path / "p"
    assert stamp(template_src, project, "enforcement=off").returncode == 0  # upstream: no policy
    commit_all(project)
    assert drift_kinds(project)[0] == 0
    code, found = drift_kinds(project, "--policy-from", str(fork))
    assert code == 1
    assert [d["kind"] for d in found if d["kind"] == "source"] == ["source"]
    assert any(d["kind"] == "policy" and "'enforcement'" in d["detail"] for d in found)
    move = next(d["detail"] for d in found if d["kind"] == "source").split("keeping the answers: ", 1)[1]
    moved = subprocess.run(move.split(), cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env={**os.environ, **GIT_ENV}, timeout=300)
    assert moved.returncode == 0, moved.stderr
    assert json.loads((project / ".codeact/settings.json").read_text())["enforcement"] == "exclusive"
    commit_all(project, "moved to the organisation's template")
    assert drift_kinds(project, "--policy-from", str(fork)) == (0, [])

    compliant = tmp_path / "q"
    assert stamp(fork, compliant).returncode == 0
    commit_all(compliant)
    assert drift_kinds(compliant, "--policy-from", str(fork)) == (0, [])


def central_check(org_checkout: Path, project: Path, src: str) -> tuple[int, list[dict[str, str]]]:
    """The organisation's check as docs/organisations.md gives it: the fork's runtime from its checkout."""
    env = {k: v for k, v in {**os.environ, **GIT_ENV}.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-m", "codeact", "drift", "--repo", str(project), "--offline",
                             "--policy-from", src, "--json"], cwd=org_checkout / "runtime", capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)["drift"]


def test_the_organisations_check_cannot_be_faked_by_the_repository_it_checks(fork, tmp_path, venv_dir):
    project = tmp_path / "p"
    assert stamp(fork, project).returncode == 0
    commit_all(project)
    assert central_check(fork, project, str(fork)) == (0, [])
    answers = project / ANSWERS
    answers.write_text(answers.read_text().replace("enforcement: exclusive", "enforcement: 'off'"))
    # One line in the launcher, one in the runtime, one in the hook: the repository's own check now passes.
    launcher = project / ".codeact/bin/codeact"
    first, rest = launcher.read_text().split("\n", 1)
    launcher.write_text(first + '\n[ "$1" = drift ] && { echo "codeact drift: in sync"; exit 0; }\n' + rest)
    runtime = project / ".codeact/runtime/codeact/lifecycle/drift.py"
    runtime.write_text(runtime.read_text() + "\ndef check(*args, **kwargs):\n    return []\n")
    hook = project / ".codeact/hooks/pre-tool-use.sh"
    first, rest = hook.read_text().split("\n", 1)
    hook.write_text(first + "\nexit 0\n" + rest)
    commit_all(project, "make the check pass")
    own = subprocess.run([str(launcher), "drift", "--offline", "--policy-from", str(fork)], cwd=project,
                         capture_output=True, text=True, env={**os.environ, "CODEACT_VENV": str(venv_dir)},
                         timeout=300)
    assert own.returncode == 0 and "in sync" in own.stdout  # why the repository's launcher must not judge itself

    code, found = central_check(fork, project, "..")  # a relative SRC: the template checkout, from its runtime/
    assert code == 1
    kinds = {(d["kind"], d["path"]) for d in found}
    assert ("source", ANSWERS) not in kinds, found
    assert {("edited", ".codeact/bin/codeact"), ("edited", ".codeact/runtime/codeact/lifecycle/drift.py"),
            ("edited", ".codeact/hooks/pre-tool-use.sh")} <= kinds, found
    assert any(d["kind"] == "policy" and "'enforcement'" in d["detail"] for d in found)

    # Pointing _src_path at a template of its own (rendering the tampered files) changes nothing: the check
    # renders from the organisation's template.
    answers.write_text(answers.read_text().replace(f"_src_path: {fork}", "_src_path: /elsewhere/template"))
    commit_all(project, "another source")
    code, found = central_check(fork, project, str(fork))
    kinds = {(d["kind"], d["path"]) for d in found}
    assert code == 1 and ("source", ANSWERS) in kinds and ("edited", ".codeact/bin/codeact") in kinds, found


def test_fork_tags_under_their_own_epoch_never_jump_to_an_upstream_tag(fork, tmp_path):
    """Upstream tags fetched into the fork sort below the fork's `v1!X.Y.Z` tags, so `copier update` stays."""
    project = tmp_path / "p"
    assert stamp(fork, project, ref="v1!0.2.0").returncode == 0
    commit_all(project)
    upstream_release = fork / "UPSTREAM.md"
    upstream_release.write_text("upstream v0.3.0\n")
    git(fork, "add", "UPSTREAM.md")
    git(fork, "commit", "-qm", "upstream release")
    git(fork, "tag", "v0.3.0")  # what `git fetch upstream --tags` brings into the fork
    try:
        result = copier(project, *UPDATE, "-d", "enforcement=exclusive")
        assert result.returncode == 0, result.stderr
        assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == "v1!0.2.0"
        assert json.loads((project / ".codeact/settings.json").read_text())["enforcement"] == "exclusive"
        # The scheme the issue saw fail: a local-version tag sorts BELOW the upstream release.
        from packaging.version import Version
        assert Version("0.3.0") > Version("0.2.0+acme.1") and Version("1!0.2.0") > Version("0.3.0")
    finally:
        git(fork, "tag", "-d", "v0.3.0")
        git(fork, "reset", "-q", "--hard", "HEAD~1")


# --- seeded files ------------------------------------------------------------------------------------------------

def test_update_never_deletes_or_revives_a_seeded_file_and_reports_what_changed(template_src, tmp_path):
    project = tmp_path / "p"
    assert stamp(template_src, project, f"tools={TOOLS}", "precommit_hook=true").returncode == 0
    commit_all(project)
    precommit = project / ".pre-commit-config.yaml"
    precommit.write_text(precommit.read_text() + "# our own hook settings\n")
    local = ".github/instructions/codeact.local.instructions.md"
    git(project, "rm", "-q", local)
    commit_all(project, "edit one seeded file, delete the other")

    result = copier(project, *UPDATE, "-d", "precommit_hook=false")
    assert result.returncode == 0, result.stderr
    assert precommit.read_text().endswith("# our own hook settings\n"), "switching the hook off keeps the file"
    assert not (project / local).exists(), "a seeded file the user deleted stays deleted"
    assert "precommit_hook: True -> False" in result.stderr
    assert "No conflicts left" in result.stderr


def test_message_after_update_lists_the_conflicts_copier_left(template_src, tmp_path):
    project = tmp_path / "p"
    assert stamp(template_src, project, f"tools={TOOLS}").returncode == 0
    commit_all(project)
    skill = project / ".github/skills/codeact/SKILL.md"
    text = skill.read_text()
    assert "`auto`" in text or "auto" in text
    skill.write_text(text.replace("auto", "AUTO-OURS"))
    commit_all(project, "hand edit")
    result = copier(project, *UPDATE, "-d", "backend=monty", "--conflict", "inline")
    assert result.returncode == 0, result.stderr
    if "<<<<<<<" in skill.read_text():
        assert "CONFLICTS LEFT" in result.stderr and ".github/skills/codeact/SKILL.md" in result.stderr
        assert "git diff --name-only --diff-filter=U" in result.stderr
    else:
        pytest.fail("the hand edit should conflict with the backend switch")


# --- drift of owned folders, restore commands --------------------------------------------------------------------

def test_extra_files_in_owned_folders_are_drift_but_ignored_caches_are_not(template_src, tmp_path):
    project = tmp_path / "p"
    assert stamp(template_src, project, f"tools={TOOLS}").returncode == 0
    commit_all(project)
    tracked = project / ".codeact/runtime/codeact/evil_extra.py"
    tracked.write_text("print('extra')\n")
    commit_all(project, "tracked extra")
    (project / ".github/skills/codeact/references/old-patterns.md").write_text("left by a recopy\n")
    cache = project / ".codeact/runtime/codeact/__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "x.cpython-311.pyc").write_bytes(b"\0")
    code, found = drift_kinds(project)
    extra = sorted(d["path"] for d in found if d["kind"] == "extra")
    assert code == 1
    assert extra == [".codeact/runtime/codeact/evil_extra.py", ".github/skills/codeact/references/old-patterns.md"]


def test_drift_gives_a_restore_command_that_works(template_src, tmp_path):
    project = tmp_path / "p"
    assert stamp(template_src, project, f"tools={TOOLS}").returncode == 0
    commit_all(project)
    git(project, "rm", "-q", ".github/agents/codeact.agent.md")
    commit_all(project, "deleted and committed")
    (project / ".codeact/bin/codeact.ps1").unlink()  # deleted in the work tree only
    code, found = drift_kinds(project)
    hints = {d["path"]: d["detail"].split("restore it with: ", 1)[1] for d in found if d["kind"] == "deleted"}
    assert code == 1 and set(hints) == {".codeact/bin/codeact.ps1", ".github/agents/codeact.agent.md"}
    assert hints[".codeact/bin/codeact.ps1"].startswith("git restore --source=HEAD")
    assert hints[".github/agents/codeact.agent.md"].startswith("copier recopy")
    for rel in (".codeact/bin/codeact.ps1", ".github/agents/codeact.agent.md"):
        command = hints[rel].split(" (commit first", 1)[0].split()
        ran = subprocess.run(command, cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             env={**os.environ, **GIT_ENV}, timeout=300)
        assert ran.returncode == 0, ran.stderr
        assert (project / rel).exists()
    before = yaml.safe_load(git(project, "show", f"HEAD:{ANSWERS}"))
    assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == before["_commit"]
    commit_all(project, "restored")
    assert drift_kinds(project) == (0, [])


def test_a_question_added_later_takes_the_policy_value_on_a_plain_update(tmp_path):
    """What a --data-file cannot do (Renovate and the update workflow never pass it again): the policy can."""
    from tests.conftest import snapshot_template

    fork = snapshot_template(tmp_path / "fork", tag="v1!0.2.0")
    (fork / "codeact-policy.yml").write_text("update_workflow: true\n")
    git(fork, "add", "codeact-policy.yml")
    git(fork, "commit", "-qm", "policy: every repository gets the update workflow")
    git(fork, "tag", "-f", "v1!0.2.0")
    config = fork / "copier.yml"
    current = config.read_text()
    start, end = current.index("\nupdate_workflow:\n"), current.index("\nprecommit_hook:\n")
    config.write_text(current[:start] + current[end:])  # an older version without the question
    git(fork, "commit", "-qam", "older: no update_workflow question")
    git(fork, "tag", "v1!0.1.0")

    project = tmp_path / "p"
    assert stamp(fork, project, ref="v1!0.1.0").returncode == 0
    assert not (project / ".github/workflows/codeact-update.yml").exists()
    commit_all(project)
    result = copier(project, "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-answered", "--skip-tasks")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load((project / ANSWERS).read_text())["update_workflow"] is True
    assert (project / ".github/workflows/codeact-update.yml").is_file()
