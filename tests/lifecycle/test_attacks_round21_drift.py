"""Red team, round 21 (part B): `codeact drift`. Each test fails while its finding is open (report-only)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, git, make_repo

sys.path.insert(0, str(REPO_ROOT / "runtime"))
from codeact.lifecycle import drift  # noqa: E402

ANSWERS = ".copier-answers.codeact.yml"
HOOKS = ".github/hooks/codeact.json"
RENDERED = '{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": ".codeact/hooks/pre-tool-use.sh"}]}}\n'


def test_an_owned_file_committed_as_a_link_to_outside_is_drift(tmp_path: Path) -> None:
    """Finding 1. ``rendered_differences`` compares an owned file's bytes through ``Path.read_bytes`` (links
    followed) and checks only the 100644 mode: an owned file a pull request commits as a symbolic link (git mode
    120000) whose target holds the rendered bytes on the checking machine passes as in sync. An absolute link to
    where the CI job's checkout lies (``/home/runner/work/<repo>/<repo>/docs/copy.json``) reads the same bytes on
    the runner and dangles in every developer's clone: the hooks file (or hook script, runtime module, launcher)
    is gone there -- Copilot runs no codeact hook, the sandbox policy is lifted -- while drift, the pre-commit hook
    and the organisation's required check report nothing. A relative link leaving the repository
    (``../../../shared/codeact.json``) does the same for a check that runs beside a sibling checkout. Fix: an
    owned path that is a link (``lstat``; ``git ls-files -s`` mode 120000) is drift, whatever it reads as."""
    outside = tmp_path / "ci-checkout" / "docs" / "copy.json"  # stands for the runner's absolute checkout path
    outside.parent.mkdir(parents=True)
    outside.write_text(RENDERED)
    project = make_repo(tmp_path / "project", {ANSWERS: "_src_path: gh:acme/tpl\n_commit: v1.0.0\nscope: repo\n",
                                               "README.md": "# demo\n"})
    (project / HOOKS).parent.mkdir(parents=True)
    os.symlink(str(outside), project / HOOKS)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the pull request: the hooks file becomes a link")
    assert git(project, "ls-files", "-s", "--", HOOKS).startswith("120000 ")
    expected = tmp_path / "expected"
    (expected / HOOKS).parent.mkdir(parents=True)
    (expected / HOOKS).write_text(RENDERED)
    found = drift.rendered_differences(project, expected)
    assert any(d.path == HOOKS for d in found), (
        f"an owned file committed as a link to outside the repository passes as in sync: {found}")


def test_a_commit_that_names_no_version_is_refused_before_git_reads_it(tmp_path: Path) -> None:
    """The red team's weak spot: ``_commit: ":/text"`` names the newest commit whose message matches, on any ref
    (Copier's mirror clone holds the template's ``refs/pull/*``), and ``@{...}``/``^{/x}`` are reflog and search
    forms: only a tag, ``git describe``'s name or a commit id is a version. Refused by its form alone, before the
    source is read (here a source that does not exist)."""
    from codeact.lifecycle.provenance import commit_error

    src = str(tmp_path / "no-such-template")
    for commit in (":/release", ":/main|fork", "HEAD@{1}", "main@{upstream}", "v1^{/evil}", "v1..v2", "v1 v2",
                   "-c", "v1~1", "refs/x.lock", "a\nb", "@", "v1:x", "v*"):
        assert "is not a version name" in commit_error(src, commit, tmp_path), commit
    for commit in ("v1.2.3", "v1.2.3-4-gdeadbee", "deadbeef" * 5, "release/2026.12", "1.0.0+build", "v1!0.2.0"):
        assert "is not a version name" not in commit_error(src, commit, tmp_path), commit
