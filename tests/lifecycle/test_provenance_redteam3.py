"""Red team 3, round 5 (issue 40.2): `codeact uninstall` takes the working tree's template source only for a stamp
nobody committed; a repository must not pass its own source off as one."""
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
