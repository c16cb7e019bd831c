"""Red team, round 20 (issue 40, item 2): `codeact drift` runs a pull request's git config while it checks
``_commit``. Each test fails while the finding is open."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, git, make_repo
from tests.lifecycle.test_attacks_round14_drift import embedded_bare_repository

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
ANSWERS = ".copier-answers.codeact.yml"


def _drift(project: Path, *args: str) -> tuple[int, str]:
    """`codeact drift` as the drift workflow and the pre-commit hook run it: from the repository root."""
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(RUNTIME), "CI": "1"}
    done = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("source", ["gh:acme/codeact-template", "https://github.com/acme/codeact-template.git",
                                    "file:///srv/templates/codeact"])
def test_a_url_source_is_never_read_from_a_folder_the_pull_request_commits(source: str, tmp_path: Path) -> None:
    """Breach (host code execution from any pull request, item 2). ``provenance.commit_error`` checks ``_commit``
    in ``orgpolicy.template_repository(src)``, which takes ``Path(git_url(src))`` as a local folder when one exists
    -- relative to the process's working folder, the repository root where the workflow and the pre-commit hook
    run drift. pathlib reads the URL ``https://github.com/acme/codeact-template.git`` (what ``gh:acme/...``
    becomes) as the relative path ``https:/github.com/acme/codeact-template.git``, and ``file:///srv/x`` as
    ``file:/srv/x``. A pull request that changes only ``_commit`` and commits plain files there (HEAD, config,
    objects/, refs/: git takes them for a bare repository, round 14's promisor whose ``uploadpack`` is a shell
    command) keeps ``_src_path`` equal to the base's, so ``source_errors`` goes on to ``commit_error``, which runs
    ``git -C https:/github.com/... rev-parse <id>^{commit}`` in the pull request's folder: git fetches the missing
    object lazily and runs the command. ``_inside_project`` does not catch it: a ``gh:``/``https:`` source is no
    local source, and a ``file://`` one is checked by its absolute path, not the relative one git is run in.
    Seen with git 2.39: the marker appears, then drift exits 1 with "is no version of gh:acme/...". Impact: code on
    the CI runner with the drift job's TEMPLATE_TOKEN, or on a reviewer's machine at `git commit`. Fix: never take a
    URL source (or a ``file://`` one) as a relative folder; resolve a local one against nothing the checked tree
    holds (and refuse one inside the repository whatever its spelling)."""
    marker = tmp_path / "pwned"
    project = make_repo(tmp_path / "project", {ANSWERS: f"_src_path: {source}\n_commit: v1.0.0\n"})
    # the pull request: one line of the answers, and plain files under the URL's spelling as a relative path
    url = {"gh:": "https://github.com/acme/codeact-template.git"}.get(source[:3], source)
    embedded_bare_repository(project / Path(url), marker)
    (project / ANSWERS).write_text(f"_src_path: {source}\n_commit: 0123456789abcdef0123456789abcdef01234567\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "bump the template")
    assert git(project, "ls-files").count("/config") == 1  # committable as ordinary files
    code, out = _drift(project, "--base", "HEAD~1")
    assert not marker.exists(), f"drift ran the pull request's git config on the host: {out[-400:]}"
    assert code == 1, out
