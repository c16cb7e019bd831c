"""The enforcement spec is the one source of both hooks: the committed hooks are exactly what it renders, its
patterns stay in the subset bash (POSIX ERE) and .NET share, and the stamped hooks stay small."""
from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import render, spec

REPO_ROOT = Path(__file__).resolve().parents[2]
PATTERNS = [f.pattern for f in spec.FORMS] + [f.body_forbid for f in spec.FORMS if f.body_forbid] + \
    [w.pattern for w in spec.WHY if w.pattern] + [spec.protected_value_pattern(), spec.NUL_ESCAPE,
                                                  spec.smart_quote_escapes()]


def test_the_committed_hooks_are_what_the_spec_renders() -> None:
    proc = subprocess.run([sys.executable, "-m", "codeact.enforcement.render", "--check", "--root", str(REPO_ROOT)],
                          cwd=REPO_ROOT / "runtime", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_check_reports_a_hand_edited_hook(tmp_path: Path) -> None:
    for rel, text in render.outputs().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert render.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / render.SH_FILE).write_text(render.render_sh().replace("nudge_after=3", "nudge_after=30"))
    assert render.main(["--check", "--root", str(tmp_path)]) == 1


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_use_only_what_ere_and_dotnet_share(pattern: str) -> None:
    re.compile(pattern)
    for construct in (r"\d", r"\s", r"\w", r"\b", "(?", "*?", "+?", "??", "{,"):
        assert construct not in pattern.replace("\\\\", ""), (construct, pattern)


def test_every_form_names_a_model_subcommand() -> None:
    for form in spec.FORMS:
        first = re.match(r"\(?([a-z]+)", form.pattern)
        assert first and first.group(1) in spec.MODEL_SUBCOMMANDS, form


@pytest.mark.parametrize("value,protected", [(".git", True), ("./.git/", True), (".git/../.git", True),
                                             ("src/.GIT/hooks", True), (".codeact", True), (".github/hooks", True),
                                             (".github/agents/x.md", True), ("plugins/codeact/bin", True),
                                             ("..", True), ("src/../..", True), (".github", False),
                                             ("src", False), (".gitignore", False), ("a..b", False)])
def test_protected_values(value: str, protected: bool) -> None:
    assert bool(re.search(spec.protected_value_pattern(), value)) is protected


def test_the_stamped_hooks_total_at_most_780_lines(stamped: Callable[..., Path]) -> None:
    """599 lines when the spec came in; +~90 for finding the other installs side by side (issue 28); +~30 for the
    session evidence a repository install must show before the user's installs pass its launcher (issue 40.1)."""
    repo = stamped(enforcement="exclusive")
    total = sum(len((repo / ".codeact/hooks" / name).read_text().splitlines())
                for name in ("pre-tool-use.sh", "pre-tool-use.ps1"))
    assert total <= 780, total


def test_render_writes_into_the_template_repository_from_any_folder(tmp_path):
    """`python -m codeact.enforcement.render --check` run from outside the repository (or in runtime/, as
    docs/enforcement.md says) checks this template's hooks, not the folder it runs in."""
    import subprocess
    import sys
    from pathlib import Path

    runtime = Path(__file__).resolve().parents[2] / "runtime"
    for cwd in (runtime, tmp_path):
        done = subprocess.run([sys.executable, "-m", "codeact.enforcement.render", "--check"], cwd=cwd,
                              env={"PYTHONPATH": str(runtime), "PATH": "/usr/bin:/bin"}, capture_output=True,
                              text=True)
        assert done.returncode == 0, (cwd, done.stderr)


def test_enforcement_doc_names_every_read_tool_and_run_option():
    from pathlib import Path

    from codeact.enforcement import spec

    doc = (Path(__file__).resolve().parents[2] / "docs" / "enforcement.md").read_text(encoding="utf-8")
    missing = [t for t in spec.READ_TOOLS if t not in doc]
    missing += [o for o in ("--json", "--timeout N", "--backend", "--workspace DIR", "--file PATH", "--session NAME")
                if o not in doc]
    assert missing == []
