"""Red team, round 14: `codeact drift` against a pull request's answers file (issue 40, item 2), re-attacked.

Each test stamps a repository with the real Copier, commits what a pull request would change, clones it as CI's
checkout does, and runs the stamped runtime's `codeact drift` there, as the drift workflow and the pre-commit hook do.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import GIT_ENV, git

ANSWERS = ".copier-answers.codeact.yml"


def drift(project: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    done = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout + done.stderr


def embedded_bare_repository(folder: Path, marker: Path) -> None:
    """Plain files a pull request can commit that git takes for a bare repository (HEAD, config, objects/, refs/):
    a partial clone whose promisor remote's ``uploadpack`` is a shell command. Any git command that needs an object
    the folder lacks fetches it lazily from that remote, which runs the command on the host."""
    (folder / "objects/info").mkdir(parents=True)
    (folder / "objects/info/.keep").write_text("")
    (folder / "refs/heads").mkdir(parents=True)
    (folder / "refs/heads/.keep").write_text("")
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
        "[extensions]\n\tpartialClone = origin\n"
        "[remote \"origin\"]\n\turl = /nonexistent/template\n\tpromisor = true\n"
        f"\tuploadpack = \"touch {marker}; echo\"\n")


def test_a_pull_requests_src_path_to_a_committed_bare_repository_runs_nothing(stamped, tmp_path):
    """Breach (host code execution, item 2): `check()` calls ``policy_drift()`` BEFORE ``source_errors()``, and
    ``policy_drift`` reads ``codeact-policy.yml`` from whatever ``_src_path``/``_commit`` the checked tree records
    (``fetch_policy(src, commit)``). For a source that is a folder, ``template_repository`` yields the folder itself
    and runs ``git -C <folder> rev-parse/show`` in it. A pull request commits ``vendor/tpl/`` holding plain files git
    takes for a bare repository (HEAD, config, objects/, refs/) whose config makes it a partial clone with a promisor
    remote; ``remote.origin.uploadpack`` is a shell command. It sets ``_src_path: vendor/tpl`` and ``_commit`` to a
    40-hex id the folder lacks: ``rev-parse --verify <id>^{commit}`` fetches the object lazily, and git runs the
    command (seen with git 2.39: the marker file appears, drift then exits with "has no version"). The drift workflow
    on pull requests and the pre-commit hook both run it from the repository root, so the relative path resolves.

    Checked with the real git, the real Copier stamp and the stamped runtime's `codeact drift` in a fresh clone of
    the pull request's commit. Impact: any pull request runs code on the CI runner (with the workflow's
    TEMPLATE_TOKEN in the environment) or on a reviewer's machine at `git commit` (pre-commit hook), although the
    issue's rule is that an unverified source is never touched except to read its policy "with git" — git on a
    repository the pull request supplies is not a safe read. docs/organisations.md says exactly this ("git on a
    source a pull request names runs what that repository configures, so an unverified source is ... not read at
    all. A local `_src_path` inside the repository is never a template"); the code does the opposite. Not affected:
    the organisation's check (``--policy-from``), which reads only SRC. Lower where the pull request could as well
    edit ``.codeact/bin/codeact`` (the repository's own launcher runs drift), but a vendored folder and two answer
    lines pass a review that a changed launcher (an owned file drift reports) would not.

    Fix: verify the source first (``source_errors`` before ``policy_drift``) and read the policy only of the
    verified source (the base's ``_src_path``, or ``--policy-from``); never run git inside a folder the checked tree
    provides (a local ``_src_path`` inside the repository is no template); and run every git read of a template with
    ``GIT_NO_LAZY_FETCH=1``, ``-c protocol.allow=never``/``protocol.https.allow=always`` style limits,
    ``safe.bareRepository=explicit`` and ``GIT_CONFIG_NOSYSTEM``-like isolation, or clone it with ``--no-local``
    into a fresh folder and read only the clone.
    """
    marker = tmp_path / "pwned-by-drift"
    embedded_bare_repository(stamped / "vendor/tpl", marker)
    answers = yaml.safe_load((stamped / ANSWERS).read_text())
    answers["_src_path"] = "vendor/tpl"
    answers["_commit"] = "0123456789abcdef0123456789abcdef01234567"
    (stamped / ANSWERS).write_text(yaml.safe_dump(answers))
    git(stamped, "add", "-A")
    git(stamped, "commit", "-qm", "a pull request: two answers and a vendored folder")
    checkout = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", str(stamped), str(checkout))
    assert (checkout / "vendor/tpl/config").is_file()
    code, out = drift(checkout, "--base", "HEAD~1")
    assert not marker.exists(), f"the pull request's command ran on the host during drift (exit {code}): {out[-600:]}"
    assert code == 1 and "source" in json.loads(out[:out.rindex("}") + 1])["drift"][0]["kind"], out[-600:]
