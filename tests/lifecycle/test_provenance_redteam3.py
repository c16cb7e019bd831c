"""Red team 3, round 5 (issue 40.2): a template source changed by a pull request's own commit is rendered locally.

Locally the base is HEAD. A developer who checks out a pull request (``gh pr checkout``) has the pull request's
commit as HEAD: a commit that moves ``_src_path`` to the attacker's template (and ``_commit`` to a tag there) is then
its own "base", and `codeact drift` (the pre-commit hook) and `codeact uninstall` render it with ``--trust`` — seen
end to end: the attacker's Jinja extension ran on the host. These fail until the check looks past HEAD (the commit
that changed the source is not a reviewed base)."""
from __future__ import annotations

from pathlib import Path

from codeact.lifecycle.provenance import source_errors
from tests.conftest import git

ANSWERS = ".copier-answers.codeact.yml"


def _template(path: Path, name: str) -> Path:
    path.mkdir(parents=True)
    (path / "copier.yml").write_text("_jinja_extensions:\n  - extensions/x.py:X\n")
    (path / "README.md.jinja").write_text(name + "\n")
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", name)
    git(path, "tag", "v1")
    return path


def _answers(src: Path) -> str:
    return f"_commit: v1\n_src_path: {src}\nscope: repo\n"


def test_a_pull_request_commit_that_moves_the_source_is_no_base(tmp_path: Path) -> None:
    good, evil = _template(tmp_path / "good", "good"), _template(tmp_path / "evil", "evil")
    project = tmp_path / "project"
    project.mkdir()
    (project / ANSWERS).write_text(_answers(good))
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "stamp")
    assert source_errors(project, "HEAD", None) == []
    git(project, "checkout", "-q", "-b", "pr")
    (project / ANSWERS).write_text(_answers(evil))
    git(project, "commit", "-qam", "bump the template")  # the pull request's commit, checked out
    assert source_errors(project, "HEAD", None), "HEAD's own change of _src_path was taken as the reviewed source"


def test_answers_in_a_submodule_are_not_a_first_stamp(tmp_path: Path) -> None:
    """uninstall takes the working tree's source when HEAD records no answers file ("a first stamp"). A repository
    whose ``.codeact`` is a submodule holding the legacy ``.codeact/.copier-answers.yml`` has none in HEAD's tree
    (a gitlink), yet one in every recursive clone's working tree."""
    evil = _template(tmp_path / "evil", "evil")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / ".copier-answers.yml").write_text(_answers(evil))
    git(inner, "init", "-q")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "answers")
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# x\n")
    git(project, "init", "-q")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), ".codeact")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "vendored")
    assert (project / ".codeact/.copier-answers.yml").is_file()
    assert source_errors(project, "HEAD", None, first_stamp=True), \
        "a submodule's answers file was trusted as a first stamp"
