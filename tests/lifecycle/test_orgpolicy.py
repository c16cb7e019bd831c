"""codeact-policy.yml itself: the format, clear errors for a broken file, sources compared by what they name."""
from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "runtime"))
from codeact.errors import ConfigError  # noqa: E402
from codeact.lifecycle import orgpolicy  # noqa: E402

POLICY = """
enforcement: off            # YAML 1.1 would read this as false
backend: [monty, hyperlight]
tools: {allowed: [view, glob, grep, edit], required: [view], forbidden: [bash]}
update_workflow: {value: true}
"""


def test_each_rule_kind_and_its_default():
    policy = orgpolicy.parse_policy(POLICY, "p")
    assert policy.violation("enforcement", "off") == ""
    assert "requires 'off', not 'nudge'" in policy.violation("enforcement", "nudge")
    assert "allows [monty, hyperlight], not 'auto'" in policy.violation("backend", "auto")
    why = policy.violation("tools", ["glob", "bash"])
    assert "[bash] not allowed" in why and "[view] required" in why and "[bash] forbidden" in why
    assert policy.violation("tools", ["view", "grep"]) == ""
    assert "requires true, not false" in policy.violation("update_workflow", False)
    assert policy.violation("scope", "global") == "", "questions without a rule are free"
    assert policy.default("tools", ["view", "create", "bash", "grep"]) == ["view", "grep"]
    assert policy.default("backend", "auto") == "monty" and policy.default("enforcement", "nudge") == "off"
    assert [q for q, _ in policy.violations({"backend": "auto", "tools": ["view"], "plugin_owner": "x"})] == ["backend"]


@pytest.mark.parametrize(("text", "message"), [
    ("enforcement: [exclusive\n", "not valid YAML"),
    ("- enforcement\n", "one entry per question"),
    ("tools: {allow: [view]}\n", "unknown key(s) ['allow']"),
    ("tools: {required: view}\n", "tools.required: give a YAML list"),
    ("tools: {required: [bash], forbidden: [bash]}\n", "both required and forbidden"),
    ("tools: {allowed: [view], required: [grep]}\n", "every required item must also be allowed"),
    ("enforcement: {value: off, allowed: [off]}\n", "cannot be combined"),
])
def test_a_broken_policy_file_says_what_is_wrong(text, message):
    with pytest.raises(orgpolicy.PolicyFileError, match=".*") as info:
        orgpolicy.parse_policy(text, "codeact-policy.yml")
    assert isinstance(info.value, ConfigError)
    assert message in str(info.value) and "codeact-policy.yml" in str(info.value)


def test_sources_are_compared_by_the_repository_they_name(tmp_path):
    same = ["gh:Acme/copier-codeact", "https://github.com/acme/copier-codeact.git",
            "git@github.com:acme/copier-codeact.git", "git+https://github.com/acme/copier-codeact/"]
    assert all(orgpolicy.same_source(same[0], other) for other in same[1:])
    assert not orgpolicy.same_source("gh:acme/copier-codeact", "gh:upstream/copier-codeact")
    assert orgpolicy.same_source(str(tmp_path), str(tmp_path / "." ))
    assert orgpolicy.git_url("gh:acme/t") == "https://github.com/acme/t.git"


def test_sources_that_differ_in_case_are_different_repositories_off_the_hosts_that_ignore_it(tmp_path):
    """Red team round 6: every path was lower-cased, so a pull request's ``git+file:///x/Tpl`` (or
    ``https://git.corp/Org/tpl``) passed drift's check against a base recording ``.../tpl`` and was rendered."""
    (tmp_path / "Tpl").mkdir()
    (tmp_path / "tpl").mkdir()
    assert not orgpolicy.same_source(f"git+file://{tmp_path}/Tpl", f"git+file://{tmp_path}/tpl")
    assert orgpolicy.same_source(f"git+file://{tmp_path}/tpl", str(tmp_path / "tpl"))
    assert not orgpolicy.same_source("https://git.corp/Org/tpl", "https://git.corp/org/tpl")
    assert orgpolicy.same_source("https://GIT.corp/org/tpl.git", "git@git.corp:org/tpl")
    assert orgpolicy.same_source("https://github.com/Org/Tpl", "gh:org/tpl")  # GitHub ignores the case


@pytest.mark.parametrize("src,local", [
    ("gh:acme/copier-codeact", False), ("https://github.com/acme/copier-codeact.git", False),
    ("git@github.com:acme/copier-codeact.git", False), ("git+https://example.com/t.git", False),
    ("/home/me/src/copier-codeact", True), ("~/src/copier-codeact", True), ("../copier-codeact", True),
    ("file:///home/me/src/copier-codeact", True),
])
def test_a_source_on_this_machine_is_told_from_one_ci_can_clone(src, local):
    assert orgpolicy.is_local_source(src) is local
