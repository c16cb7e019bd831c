"""Credential shapes refused in what a program writes, and the placeholders that pass.

A small data table, not a detector library: detect-secrets (the one well-known Python detector) has no rule for
Google API keys, last released in 2024, and would pull ``requests`` and PyYAML into the runtime's pinned venv;
gitleaks and trufflehog are Go binaries. The rules follow the shapes gitleaks' default rules use (a fixed prefix
and a body), each with a keyword that must occur before its pattern runs, and gitleaks' idea of an entropy floor:
a body of one repeated character or of very low entropy (``ghp_xxxx…``, ``AKIAXXXXXXXXXXXXXXXX``) is an obvious
placeholder in docs and examples and is allowed.

The check looks at the RESULTING text of a write and refuses only credentials it did not already hold: a secret
assembled from two edits is caught, and an unrelated edit of a file that already holds one is not refused.
Patterns are compiled on first use (the check runs only on writes; start-up stays untouched).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from ..errors import PolicyError

ALLOW_ENV = "CODEACT_ALLOW_SECRETS"


class Rule(NamedTuple):
    """One credential shape: ``pattern``'s group ``body`` (if any) is what the placeholder test looks at."""

    kind: str
    keywords: tuple[str, ...]  # at least one must occur (case-sensitive) before the pattern runs
    pattern: str


_END = r"(?![A-Za-z0-9_-])"  # \b fails after a trailing "-", which Google and Slack bodies may end with
RULES: tuple[Rule, ...] = (
    Rule("AWS access key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"\b(?:AKIA|ASIA|ABIA|ACCA)(?P<body>[0-9A-Z]{16})\b"),
    Rule("GitHub token", ("gh", "github_pat_"),
         r"\b(?:gh[pousr]_(?P<body>[A-Za-z0-9]{36,255})|github_pat_(?P<pat>[A-Za-z0-9_]{60,255}))\b"),
    Rule("GitLab token", ("glpat-",), r"\bglpat-(?P<body>[0-9A-Za-z_-]{20,})" + _END),
    Rule("OpenAI-style API key", ("sk-",), r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?(?P<body>[A-Za-z0-9_-]{32,})" + _END),
    Rule("Slack token", ("xox",), r"\bxox[abeoprs]-(?P<body>\d{6,}-[0-9A-Za-z-]{8,})" + _END),
    Rule("Slack webhook", ("hooks.slack.com",),
         r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<body>[A-Za-z0-9+/_-]{20,})"),
    Rule("Google API key", ("AIza",), r"\bAIza(?P<body>[0-9A-Za-z_-]{35})" + _END),
    Rule("Stripe secret key", ("k_live_",), r"\b[sr]k_live_(?P<body>[0-9A-Za-z]{20,})\b"),
    Rule("npm token", ("npm_",), r"\bnpm_(?P<body>[A-Za-z0-9]{36})\b"),
    Rule("PyPI token", ("pypi-",), r"\bpypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_-]{50,})" + _END),
    Rule("private key", ("PRIVATE KEY",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
)
SECRET_KINDS: tuple[str, ...] = tuple(rule.kind for rule in RULES)
_MIN_ENTROPY = 2.5  # bits per character; random tokens score 3.5-5, "xxxx", "0000-0000-xxxx" below 1.5
_REPEAT = re.compile(r"(.)\1{7}")  # eight of one character in a row: a placeholder, not a random token


class Finding(NamedTuple):
    """A credential found in a text: its kind, the matched text and the 1-based line it starts on."""

    kind: str
    value: str
    line: int


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[Rule, re.Pattern[str]], ...]:
    return tuple((rule, re.compile(rule.pattern)) for rule in RULES)


def is_placeholder(body: str) -> bool:
    """Whether a token body is an obvious stand-in: a run of one character, or too little entropy to be random."""
    if not body:
        return False
    if _REPEAT.search(body):
        return True
    counts = Counter(body)
    entropy = -sum(n / len(body) * math.log2(n / len(body)) for n in counts.values())
    return entropy < _MIN_ENTROPY


def find(text: str) -> list[Finding]:
    """Every credential in ``text`` (placeholders left out), in the order of the rules."""
    found: list[Finding] = []
    for rule, pattern in _compiled():
        if not any(word in text for word in rule.keywords):
            continue
        for match in pattern.finditer(text):
            body = next((g for g in match.groups() if g), "")
            if body and is_placeholder(body):
                continue
            found.append(Finding(rule.kind, match.group(0), text.count("\n", 0, match.start()) + 1))
    return found


def check(text: str, *, where: str, before: str = "") -> None:
    """Refuse ``text`` (what ``where`` would hold after a write) if it holds a credential that ``before`` (what it
    holds now) did not; raises :class:`PolicyError` naming the kind and line, never the value."""
    found = find(text)
    if not found:
        return
    known = Counter(f.value for f in find(before)) if before else Counter()
    for finding in found:
        if known[finding.value] > 0:
            known[finding.value] -= 1
            continue
        raise PolicyError(
            f"refusing to write {where}: the content looks like a {finding.kind} (line {finding.line}). Keep "
            f"secrets out of files (read them from the environment); an obvious placeholder such as "
            f"ghp_xxxx... is fine. If this is intended, the user can set {ALLOW_ENV}=1")


__all__ = ["RULES", "SECRET_KINDS", "Finding", "Rule", "check", "find", "is_placeholder"]
