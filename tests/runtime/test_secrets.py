"""The secret check on writes: the resulting text is scanned, every rule has a sample, placeholders pass."""
from __future__ import annotations

import pytest

from codeact.core import secrets
from codeact.errors import PolicyError
from codeact.tools import atomic, files


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(atomic, "_cleaned", False)


# Assembled at run time so this file does not itself hold anything a scanner (or a push protection) would flag.
# The AWS one is AWS's own documentation example; the Slack one follows the shape of Slack's token docs.
SAMPLES: dict[str, str] = {
    "AWS access key": "aws_key = " + "AKIA" + "IOSFODNN7" + "EXAMPLE",
    "GitHub token": "token: " + "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2,
    "GitLab token": "GITLAB_TOKEN=" + "glpat-" + "Xq7vR2mK9pL4wN8sT3bZ",
    "OpenAI-style API key": "OPENAI_API_KEY=" + "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + "AbCd",
    "Slack token": "SLACK_BOT_TOKEN=" + "xoxb-" + "17653672481-19874698323-" + "pdFZKVeTuE8sk7oOcBrzbqgy",
    "Slack webhook": "url = 'https://hooks.slack.com/" + "services/T0A1B2C3D/B4E5F6G7H/" + "q8R9s0T1u2V3w4X5y6Z7a8B9'",
    "Google API key": 'const key = "' + "AIza" + "SyD4aGmWKa4JsXZ-HjGw7ISLn_3namBGewQ" + '";',
    "Stripe secret key": "STRIPE_KEY=" + "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "npm token": "//registry.npmjs.org/:_authToken=" + "npm_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
    "PyPI token": "password = " + "pypi-" + "AgEIcHlwaS5vcmc" + "CJGRmNTM0ZjQ2LTU3ODYtNGE4Ni1iZGQ1LWQ3NDk4YjE3" + "AAIqWzMsImE3ZWQ0ZGI5LTg2YjYtNDg",
    "private key": "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
}
# Obvious stand-ins, as docs and examples write them: never refused.
PLACEHOLDERS = [
    "token: " + "ghp_" + "x" * 36,
    "token: " + "ghp_" + "X" * 36,
    "aws_key = " + "AKIA" + "X" * 16,
    "aws_key = " + "AKIA" + "0" * 16,
    "SLACK_BOT_TOKEN=" + "xoxb-" + "0000000000-0000000000-" + "x" * 24,
    "SLACK_BOT_TOKEN=xoxb-your-token-here",
    'key = "' + "AIza" + "x" * 35 + '"',
    "OPENAI_API_KEY=" + "sk-" + "x" * 48,
    "STRIPE_KEY=" + "sk_" + "live_" + "0" * 24,
]


def test_every_rule_has_a_sample():
    assert sorted(SAMPLES) == sorted(secrets.SECRET_KINDS)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_and_named(kind):
    found = secrets.find("first line\n" + SAMPLES[kind] + "\n")
    assert [(f.kind, f.line) for f in found] == [(kind, 2)]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_create_and_edit_refuse_each_kind(ctx, fixture_workspace, kind):
    with pytest.raises(PolicyError, match=f"leak.env: the content looks like a {kind} \\(line 1\\).*"
                                          "CODEACT_ALLOW_SECRETS=1"):
        files.create(ctx, path="leak.env", file_text=SAMPLES[kind])
    assert not (fixture_workspace / "leak.env").exists()
    with pytest.raises(PolicyError, match=kind) as refused:
        files.edit(ctx, path="README.md", old_str="# Demo", new_str=SAMPLES[kind])
    assert SAMPLES[kind].split()[-1][-12:] not in str(refused.value)  # the message never repeats the secret
    assert (fixture_workspace / "README.md").read_text().startswith("# Demo\n")


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_obvious_placeholders_are_written(ctx, fixture_workspace, text):
    assert secrets.find(text) == []
    files.create(ctx, path="example.env", file_text=text + "\n")
    assert (fixture_workspace / "example.env").read_text() == text + "\n"


@pytest.mark.parametrize("kind", ["GitHub token", "Slack token", "Google API key"])
def test_a_secret_split_over_two_edits_is_refused(ctx, fixture_workspace, kind):
    """Neither ``new_str`` holds the credential; the file would after the second edit."""
    secret = SAMPLES[kind]
    head, tail = secret[: len(secret) // 2], secret[len(secret) // 2:]
    files.edit(ctx, path="README.md", old_str="# Demo\n", new_str=f"# Demo\n{head}@@\n")
    assert secrets.find(head) == [] and secrets.find(tail) == []
    with pytest.raises(PolicyError, match=f"looks like a {kind}"):
        files.edit(ctx, path="README.md", old_str="@@", new_str=tail)
    assert f"{head}@@\n" in (fixture_workspace / "README.md").read_text()


def test_a_file_that_already_holds_a_secret_can_still_be_edited(ctx, fixture_workspace):
    target = fixture_workspace / "config" / "local.env"
    target.write_text(SAMPLES["AWS access key"] + "\nDEBUG=0\n")
    files.edit(ctx, path="config/local.env", old_str="DEBUG=0", new_str="DEBUG=1")
    assert target.read_text().endswith("DEBUG=1\n")
    with pytest.raises(PolicyError, match="AWS access key"):  # a second copy is a new one
        files.edit(ctx, path="config/local.env", old_str="DEBUG=1", new_str=SAMPLES["AWS access key"])


def test_check_compares_with_what_the_file_held():
    key = SAMPLES["Google API key"]
    secrets.check(key + "\nmore", where="a.js", before=key)
    with pytest.raises(PolicyError, match=r"a\.js: the content looks like a Google API key \(line 3\)"):
        secrets.check("x\ny\n" + key, where="a.js", before="")


def test_placeholder_test_itself():
    assert secrets.is_placeholder("x" * 36) and secrets.is_placeholder("ab" * 18)
    assert not secrets.is_placeholder("IOSFODNN7EXAMPLE") and not secrets.is_placeholder("a1B2c3D4e5F6g7H8i9J0")


@pytest.mark.parametrize("kind", ["Slack token", "Google API key"])
def test_secrets_allowed_when_the_user_says_so(run_program, fixture_workspace, kind):
    code = f"create(path='leak.env', file_text={SAMPLES[kind]!r})"
    refused = run_program(code)
    assert not refused.ok and refused.error.type == "PermissionError" and kind in refused.error.message
    allowed = run_program(code, env={"CODEACT_ALLOW_SECRETS": "1"})
    assert allowed.ok, allowed.error
    assert (fixture_workspace / "leak.env").read_text() == SAMPLES[kind]
