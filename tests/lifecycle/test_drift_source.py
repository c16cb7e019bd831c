"""`codeact drift` never renders, with --trust, a template source the checked tree changed (issue 40, item 2).

A pull request that points `_src_path` at another template, or `_commit` at an unreleased commit, would otherwise
run that template's Jinja extension on the host (with the CI job's template token). The hostile template here
writes a marker file from its extension: the marker must never appear, and drift must exit 1 naming the source.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from copier import run_copy

from tests.conftest import GIT_ENV, git, make_repo

ANSWERS = ".copier-answers.codeact.yml"
EVIL = '''from pathlib import Path

from jinja2.ext import Extension


class Evil(Extension):
    def __init__(self, environment):
        super().__init__(environment)
        Path({marker!r}).write_text("the template's code ran on the host")
'''


def hostile_template(dest: Path, marker: Path) -> Path:
    """A Copier template whose Jinja extension writes ``marker`` as soon as Copier loads it."""
    (dest / "extensions").mkdir(parents=True)
    (dest / "extensions/evil.py").write_text(EVIL.format(marker=str(marker)))
    (dest / "copier.yml").write_text("_subdirectory: template\n_answers_file: .copier-answers.codeact.yml\n"
                                     "_jinja_extensions:\n  - copier_template_extensions.TemplateExtensionLoader\n"
                                     "  - extensions/evil.py:Evil\n")
    (dest / "template").mkdir()
    (dest / "template/README.md").write_text("nothing to see\n")
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "hostile")
    git(dest, "tag", "v9.9.9")
    return dest


def drift(project: Path, *args: str) -> tuple[int, list[dict[str, str]], str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    done = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    drifts = json.loads(done.stdout)["drift"] if done.stdout.strip().startswith("{") else []
    return done.returncode, drifts, done.stdout + done.stderr


def set_answers(project: Path, **values: str) -> None:
    path = project / ANSWERS
    answers = yaml.safe_load(path.read_text())
    answers.update(values)
    path.write_text(yaml.safe_dump(answers))


def test_a_changed_source_is_reported_and_never_rendered(stamped, tmp_path):
    marker = tmp_path / "pwned"
    evil = hostile_template(tmp_path / "evil", marker)
    set_answers(stamped, _src_path=str(evil), _commit="v9.9.9")
    # Locally (the pre-commit hook): HEAD records the trusted source.
    code, drifts, out = drift(stamped)
    assert not marker.exists(), "drift rendered the changed template with --trust"
    assert code == 1 and [d["kind"] for d in drifts if d["kind"] == "source"] == ["source"], out
    assert str(evil) in drifts[-1]["detail"] and "never rendered" in drifts[-1]["detail"]
    # In CI: the pull request's commit, checked against its base.
    git(stamped, "commit", "-qam", "a two-line pull request")
    code, drifts, out = drift(stamped, "--base", "HEAD~1")
    assert not marker.exists() and code == 1 and any(d["kind"] == "source" for d in drifts), out


def test_a_checked_out_pull_request_that_moved_the_source_is_drift_locally(stamped, tmp_path):
    """After ``gh pr checkout`` HEAD is the pull request's own commit: against HEAD its moved ``_src_path`` looked
    reviewed, and a local drift (the pre-commit hook of a fix-up commit) rendered the attacker's template. Locally the
    base is now where HEAD left the remote's default branch."""
    marker = tmp_path / "pwned"
    evil = hostile_template(tmp_path / "evil", marker)
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(stamped), str(origin))
    git(stamped, "remote", "add", "origin", str(origin))
    git(stamped, "fetch", "-q", "origin")
    git(stamped, "remote", "set-head", "origin", "--auto")
    git(stamped, "switch", "-qc", "pr-42")
    set_answers(stamped, _src_path=str(evil), _commit="v9.9.9")
    git(stamped, "commit", "-qam", "the pull request, checked out")
    code, drifts, out = drift(stamped)
    assert not marker.exists(), "a local drift rendered the pull request's template"
    assert code == 1 and any(d["kind"] == "source" and str(evil) in d["detail"] for d in drifts), out
    git(stamped, "switch", "-q", "-")  # the default branch itself: HEAD is the fork point, no drift of the source
    code, drifts, out = drift(stamped)
    assert not [d for d in drifts if d["kind"] == "source"], out


def test_an_unreleased_commit_of_the_same_source_is_not_rendered(template_src, tmp_path, venv_dir, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    marker = tmp_path / "pwned"
    source = tmp_path / "source"
    git(tmp_path, "clone", "-q", str(template_src), str(source))
    project = make_repo(tmp_path / "project")
    run_copy(str(source), project, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    # A branch of the template (a pull request to it, never merged) that adds an extension.
    git(source, "switch", "-qc", "unmerged")
    (source / "extensions/evil.py").write_text(EVIL.format(marker=str(marker)))
    config = source / "copier.yml"
    config.write_text(config.read_text().replace("  - extensions/codeact.py:CodeactExtension\n",
                                                 "  - extensions/codeact.py:CodeactExtension\n"
                                                 "  - extensions/evil.py:Evil\n"))
    git(source, "add", "-A")
    git(source, "commit", "-qm", "evil")
    sha = git(source, "rev-parse", "HEAD").strip()
    git(source, "switch", "-q", "-")
    set_answers(project, _commit=sha)
    code, drifts, out = drift(project)
    assert not marker.exists(), "drift rendered an unreleased commit with --trust"
    assert code == 1 and "neither a tag" in drifts[-1]["detail"], out


def test_a_newer_tag_of_the_same_source_is_no_source_drift(stamped):
    answers = yaml.safe_load((stamped / ANSWERS).read_text())
    # The same source, one release later (as Renovate and the update workflow move it).
    git(Path(answers["_src_path"]), "tag", "v0.1.1")
    try:
        set_answers(stamped, _commit="v0.1.1")
        git(stamped, "commit", "-qam", "renovate: v0.1.1")
        code, drifts, out = drift(stamped, "--base", "HEAD~1")
        assert code == 0 and drifts == [], out
    finally:
        git(Path(answers["_src_path"]), "tag", "-d", "v0.1.1")


def test_a_template_source_inside_the_repository_is_never_read_even_when_the_base_records_it(template_src, tmp_path,
                                                                                             venv_dir, monkeypatch):
    """A base that records a local ``_src_path`` inside the repository (``vendor/tpl``) reviewed the path, not the
    folder's files, which every later commit may change: git run there runs what its config names (a promisor's
    ``uploadpack``). Such a source is reported and git never runs in it, for its version or its policy."""
    from tests.lifecycle.test_attacks_round14_drift import drift, embedded_bare_repository

    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    project = make_repo(tmp_path / "project")
    run_copy(str(template_src), project, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    marker = tmp_path / "ran"
    embedded_bare_repository(project / "vendor/tpl", marker)
    answers = yaml.safe_load((project / ANSWERS).read_text())
    answers["_src_path"], answers["_commit"] = "./vendor/tpl", "0123456789abcdef0123456789abcdef01234567"
    (project / ANSWERS).write_text(yaml.safe_dump(answers))
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a vendored template, recorded by the base")
    code, out = drift(project, "--base", "HEAD")
    assert not marker.exists(), out[-600:]
    assert code == 1 and "lies inside the repository" in out, out[-600:]
