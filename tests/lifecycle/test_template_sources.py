"""Which template sources `codeact drift` runs git on, and where (issue 40, item 2; red team rounds 14 and 20).

A URL source is never a path, whatever folder its spelling names relative to the repository root; a local source is
an absolute real folder outside the checked repository; git only ever reads a clone of our own. Each drift test
commits, where the source's spelling points, plain files git takes for a partial clone whose promisor's
``uploadpack`` (or fsmonitor) is a command that writes a marker: the marker must never appear.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, REPO_ROOT, git, make_repo
from tests.lifecycle.test_attacks_round14_drift import embedded_bare_repository

sys.path.insert(0, str(REPO_ROOT / "runtime"))
from codeact.lifecycle import orgpolicy, provenance  # noqa: E402

ANSWERS = ".copier-answers.codeact.yml"
MISSING = "0123456789abcdef0123456789abcdef01234567"


def _drift(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(REPO_ROOT / "runtime"), "CI": "1", **(env or {})}
    done = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout + done.stderr


def _pull_request(tmp_path: Path, source: str, folder: str) -> tuple[Path, Path]:
    """A repository whose base records ``source``, and a pull request that moves ``_commit`` to an id the
    template lacks and commits a promisor repository at ``folder`` (relative to the repository root)."""
    marker = tmp_path / "pwned"
    project = make_repo(tmp_path / "project", {ANSWERS: f"_src_path: '{source}'\n_commit: v1.0.0\n"})
    embedded_bare_repository(project / folder, marker)
    (project / folder / "refs/heads/main").write_text(MISSING + "\n")  # HEAD^{commit} needs a lazy fetch too
    (project / ANSWERS).write_text(f"_src_path: '{source}'\n_commit: {MISSING}\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the pull request")
    return project, marker


URL_FORMS = [
    ("gl:acme/tpl", "https://gitlab.com/acme/tpl.git"),
    ("git@github.com:acme/tpl.git", "git@github.com:acme/tpl.git"),
    ("ssh://git@github.com/acme/tpl.git", "ssh://git@github.com/acme/tpl.git"),
    ("git+https://github.com/acme/tpl.git", "https://github.com/acme/tpl.git"),
    ("HTTPS://github.com/acme/tpl.git", "HTTPS://github.com/acme/tpl.git"),
    ("https://github.com/acme/tpl.git ", "https://github.com/acme/tpl.git"),
    ("file:///srv/templates/tpl", "file:///srv/templates/tpl"),
    ("FILE:///srv/templates/tpl", "FILE:///srv/templates/tpl"),
]


@pytest.mark.parametrize(("source", "spelling"), URL_FORMS)
def test_no_url_form_is_read_from_the_folder_its_spelling_names(source: str, spelling: str, tmp_path: Path) -> None:
    project, marker = _pull_request(tmp_path, source, str(Path(spelling)))
    code, out = _drift(project, "--base", "HEAD~1")
    assert not marker.exists(), out[-600:]
    assert code == 1, out[-600:]


LOCAL_FORMS = [("vendor/tpl", "vendor/tpl"), ("./vendor/tpl", "vendor/tpl"), ("file:vendor/tpl", "file:vendor/tpl"),
               ("file:/srv/tpl", "file:/srv/tpl"), ("https:/github.com/acme/tpl.git", "https:/github.com/acme/tpl.git"),
               ("Gh:acme/tpl", "Gh:acme/tpl"), (".", "."), ("vendor\\tpl", "vendor\\tpl")]


@pytest.mark.parametrize(("source", "folder"), LOCAL_FORMS)
def test_a_local_source_inside_the_repository_is_refused_in_every_spelling(source: str, folder: str,
                                                                          tmp_path: Path) -> None:
    project, marker = _pull_request(tmp_path, source, folder) if folder != "." else (None, None)
    if project is None:  # the repository itself: its .git is CI's, so plant nothing; the answer is still "no"
        project = make_repo(tmp_path / "project", {ANSWERS: f"_src_path: .\n_commit: {MISSING}\n"})
        marker = tmp_path / "pwned"
    code, out = _drift(project, "--base", "HEAD")
    assert not marker.exists(), out[-600:]
    assert code == 1 and "lies inside the repository" in out, out[-600:]


def test_an_absolute_or_file_url_source_inside_the_repository_is_refused(tmp_path: Path) -> None:
    """By absolute path, by ``file://`` URL (percent escapes and ``..`` as urllib reads them), through a link the
    checked tree holds, and through a link outside it that leads back in."""
    project = make_repo(tmp_path / "project", {"vendor/tpl/x": ""})
    (project / "link").symlink_to(tmp_path)  # a committed link leading out: still the checked tree's
    (tmp_path / "back").symlink_to(project / "vendor")
    real = project.resolve()
    for src in (f"{real}/vendor/tpl", f"file://{real}/vendor/tpl", f"file://localhost{real}/vendor/tpl",
                f"file://{real}/%76endor/tpl", f"file://{tmp_path}/x/../project/vendor", f"file:///{real}/vendor", f"{tmp_path}/back/tpl",
                "link/elsewhere", f"{real}/link/..", "../project/vendor/tpl", str(real)):
        with pytest.raises(orgpolicy.UntrustedSourceError, match="inside the repository"):
            orgpolicy.template_folder(src, project)
        assert "inside the repository" in provenance.commit_error(src, "v1", project)
    with pytest.raises(orgpolicy.UntrustedSourceError, match="no folder of this machine"):
        orgpolicy.template_folder("file://elsewhere/srv/tpl", project)


def test_a_local_source_outside_the_repository_is_its_real_folder(tmp_path: Path, monkeypatch) -> None:
    project = make_repo(tmp_path / "project")
    (tmp_path / "tpl").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    real = (tmp_path / "tpl").resolve()
    for src in ("../tpl", f"{tmp_path}/tpl", f"file://{tmp_path}/tpl", "~/tpl", f"git+file://{tmp_path}/tpl",
                f" {tmp_path}/tpl "):
        assert orgpolicy.template_folder(src, project) == real, src
    for src in ("gh:acme/tpl", "https://github.com/acme/tpl", "git@github.com:acme/tpl", "ssh://h/tpl"):
        assert orgpolicy.template_folder(src, project) is None, src


@pytest.mark.parametrize("source", ["ext::sh -c touch% {marker}", "fd::3", "foo://example.invalid/tpl",
                                    "ext://sh -c touch% {marker}"])
def test_no_remote_helper_is_run_for_a_source(source: str, tmp_path: Path) -> None:
    project = make_repo(tmp_path / "project")
    marker = tmp_path / "pwned"
    why = provenance.commit_error(source.format(marker=marker), "v1", project)
    assert why and not marker.exists(), why


def _template_with_hostile_config(folder: Path, marker: Path) -> Path:
    """A real template repository outside the project whose own config runs ``marker`` from a lazy fetch and from
    fsmonitor: a folder we did not clone ourselves, so git never runs with its config."""
    git(folder.parent, "init", "-q", folder.name)
    (folder / "copier.yml").write_text("{}\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "t")
    git(folder, "tag", "v1")
    git(folder, "config", "core.repositoryformatversion", "1")
    git(folder, "config", "core.fsmonitor", f"touch {marker}; echo")
    git(folder, "config", "extensions.partialClone", "origin")
    git(folder, "config", "remote.origin.url", "/nonexistent")
    git(folder, "config", "remote.origin.promisor", "true")
    git(folder, "config", "remote.origin.uploadpack", f"touch {marker}; echo")
    return folder


def test_git_never_runs_with_a_local_templates_own_config(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    template = _template_with_hostile_config(tmp_path / "tpl", marker)
    project = make_repo(tmp_path / "project")
    assert provenance.commit_error(str(template), "v1", project) == ""
    assert "is no version" in provenance.commit_error(str(template), MISSING, project)
    assert orgpolicy.fetch_policy(str(template), "v1", project).rules == {}
    assert not marker.exists()


def test_git_on_a_template_clone_never_reads_the_checked_repository(tmp_path: Path) -> None:
    """A git hook exports GIT_DIR (the pre-commit hook runs drift with it): git on the template's clone must not
    take the checked repository, and its config (a promisor's uploadpack here: a lazy fetch of the id the template
    lacks would run it), for the template."""
    marker = tmp_path / "pwned"
    template = tmp_path / "tpl"
    git(tmp_path, "init", "-q", "tpl")
    (template / "copier.yml").write_text("{}\n")
    git(template, "add", "-A")
    git(template, "commit", "-qm", "t")
    project = make_repo(tmp_path / "project", {ANSWERS: f"_src_path: {template}\n_commit: v1\n"})
    for key, value in (("extensions.partialClone", "origin"), ("remote.origin.url", "/nonexistent"),
                       ("remote.origin.promisor", "true"), ("remote.origin.uploadpack", f"touch {marker}; echo")):
        git(project, "config", key, value)
    (project / ANSWERS).write_text(f"_src_path: {template}\n_commit: {MISSING}\n")
    code, out = _drift(project, "--base", "HEAD", env={"GIT_DIR": str(project / ".git"),
                                                       "GIT_INDEX_FILE": str(project / ".git/index")})
    assert not marker.exists(), out[-600:]
    assert code == 1 and "is no version" in out, out[-600:]


@pytest.mark.parametrize(("policy_from", "folder", "inside"), [
    ("gh:acme/tpl", "https://github.com/acme/tpl.git", False), ("https://github.com/acme/tpl.git", None, False),
    ("git@github.com:acme/tpl.git", None, False), ("file:///srv/tpl", None, False),
    ("./vendor/tpl", "vendor/tpl", True), ("vendor/tpl", None, True), ("file:vendor/tpl", None, True)])
def test_policy_from_is_never_read_from_a_folder_of_the_repository(policy_from: str, folder: str | None,
                                                                  inside: bool, tmp_path: Path) -> None:
    """``--policy-from`` goes through the same reader (its value can come from the checked tree's hook config)."""
    project, marker = _pull_request(tmp_path, policy_from, str(Path(folder or policy_from)))
    code, out = _drift(project, "--base", "HEAD~1", "--policy-from", policy_from)
    assert not marker.exists(), out[-600:]
    assert code in (1, 2), out[-600:]
    assert ("lies inside the repository" in out) == inside, out[-600:]
