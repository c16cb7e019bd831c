"""The stamped texts' examples in a repository with no Python (issue 42 item 3): no ``*.py`` anywhere in the
instructions, agent and skill; no hit for the repository's own TODO search; and every example program, run as a
model would run it, answers what an independent tool (git grep, git ls-files) says."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from codeact.core.config import Settings
from codeact.runner import run
from tests.runtime.conftest import base_environ

GO = {
    "go.mod": "module example.com/demo\n",
    "main.go": 'package main\n\nimport (\n\t"encoding/json"\n\t"fmt"\n)\n\n// TODO: flags\nfunc main() {\n'
               '\tb, _ := json.Marshal(1)\n\tfmt.Println(string(b), old_name())\n}\n',
    "util.go": 'package main\n\nimport "encoding/json"\n\nfunc old_name() int { return 1 }\n\n'
               'type Server struct{}\n\nfunc (s *Server) Serve() {} // TODO: serve\n\nvar _ = json.Valid\n',
    "README.md": "# demo\n\nA Go tool.\n",
    "docs/guide.md": "# guide\n\none\ntwo\n",
}
TEXTS = (".github/instructions/codeact.instructions.md", ".github/agents/codeact.agent.md",
         ".github/skills/codeact/SKILL.md", ".github/skills/codeact/references/patterns.md")


@pytest.fixture(scope="module")
def project(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from copier import run_copy

    from tests.conftest import git, make_repo

    path = make_repo(tmp_path_factory.mktemp("examples") / "demo", GO)
    run_copy(str(template_src), path, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True,
             overwrite=True, data={"tools": ["view", "create", "edit", "glob", "grep", "outline"]})
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


def test_no_python_file_pattern_and_no_todo_hit_in_the_stamped_texts(project):
    for rel in TEXTS:
        text = (project / rel).read_text()
        assert ".py" not in text, f"{rel} names a Python file in a repository that has none"
        assert "TODO" not in text, f"{rel} adds a hit to the repository's own TODO search"


def _programs(project: Path) -> list[str]:
    """Every example program of the stamped texts: the heredocs and the ```python blocks."""
    found = []
    for rel in TEXTS:
        text = (project / rel).read_text()
        found += re.findall(r"run - <<'PY'\n(.*?)\nPY\n", text, re.S)
        found += [block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "issues." not in block]
    return found


def _run(project: Path, code: str, tmp_path: Path):
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    return run(code, workspace=project, backend="monty", settings=Settings(),
               environ=base_environ(config))


def test_every_example_program_runs_and_answers_as_git_does(project, tmp_path):
    programs = _programs(project)
    assert len(programs) >= 6
    todo = subprocess.run(["git", "grep", "-c", "TODO", "--", ":!.github", ":!.codeact"], cwd=project,
                          capture_output=True, text=True).stdout
    todos = sum(int(line.rpartition(":")[2]) for line in todo.splitlines())
    for code in programs:
        result = _run(project, code, tmp_path)
        assert result.ok, (code, result.error)
        if "TO[D]O" in code and result.result is not None:
            assert result.result == todos, code
    imports = _run(project, 'outline(kind="import", name=r".*json.*")', tmp_path)
    assert [(i["path"], i["line"]) for i in imports.result] == [("main.go", 4), ("util.go", 3)]
    sizes = _run(project, 'sorted(glob(pattern="**/*.md"))', tmp_path)
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=project, capture_output=True, text=True).stdout.split()
    owned = json.loads((project / ".codeact/manifest.json").read_text())["owned"]
    own = [e for e in owned if e.endswith(".md") or e.endswith("/")]
    assert sizes.result == sorted(p for p in listed if not any(p == e or (e.endswith("/") and p.startswith(e))
                                                               for e in own))  # CodeAct's own files left out
