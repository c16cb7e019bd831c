"""The enforcement spec is the one source of every hook: the stamped hooks are exactly what it renders, its
patterns stay in the subset bash (POSIX ERE) and .NET share, and the stamped hooks stay small."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from codeact import layout
from codeact.enforcement import render, spec

REPO_ROOT = Path(__file__).resolve().parents[2]
PATTERNS = [f.pattern for f in spec.FORMS] + [f.body_forbid for f in spec.FORMS if f.body_forbid] + \
    [w.pattern for w in spec.WHY if w.pattern] + [spec.protected_value_pattern(), spec.NUL_ESCAPE,
                                                  spec.smart_quote_escapes()]


@pytest.mark.parametrize("scope", ["repo", "global", "plugin"])
def test_the_stamped_hooks_are_what_the_spec_renders(scope: str, stamped: Callable[..., Path]) -> None:
    """Issue 46.3: no generated hook is committed; the stamp renders each from the spec with the copy's answers."""
    import jinja2

    answers = {"scope": scope, "enforcement": "exclusive"} | ({"plugin_owner": "Acme"} if scope == "plugin" else {})
    repo = stamped(**answers)
    folder = {"repo": ".codeact", "global": ".codeact", "plugin": "plugins/codeact"}[scope]
    recorded = yaml.safe_load((repo / ".copier-answers.codeact.yml").read_text()) | layout.for_scope(scope).paths()
    for name in render.HOOK_NAMES:
        path = repo / folder / "hooks" / name
        if name.endswith(".ps1") and scope != "repo":
            assert not path.exists()
            continue
        want = jinja2.Environment(keep_trailing_newline=True).from_string(render.hook_template(name)).render(recorded)
        assert path.read_text() == want, name
        assert render.GENERATED in want and "{{" not in want.split("\n", 3)[3][:200]


def test_the_template_commits_no_generated_hook() -> None:
    hooks = REPO_ROOT / "template" / "{{ codeact_dir }}" / "hooks"
    for path in hooks.iterdir():
        name = path.name.removesuffix(".jinja").replace("{% if scope == 'repo' %}", "").replace("{% endif %}", "")
        assert path.read_text() == f'{{{{ codeact_hook("{name}") }}}}', path.name


def test_render_prints_a_hook_template_and_names_the_hooks_it_knows(capsys: pytest.CaptureFixture[str]) -> None:
    assert render.main(["pre-tool-use.sh"]) == 0
    assert capsys.readouterr().out == render.hook_template("pre-tool-use.sh")
    with pytest.raises(SystemExit):
        render.main(["nope.sh"])
    with pytest.raises(ValueError, match="no hook named 'nope.sh'"):
        render.hook_template("nope.sh")


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
