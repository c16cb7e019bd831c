"""Issue 45's second held-out corpus (round 4): programs about attrs (Python), commander (JavaScript) and
tree-sitter-json (C), written by a helper that had seen neither the sandbox's fixes nor round 3's programs, run
through the stamped launcher and judged against CPython with the reference tools. Never a silent wrong answer; the
first-try rate is held to FIRST_TRY_FLOOR and the rate after the stored rewrites to AFTER_REWRITE_FLOOR (raise
them as the sandbox's gaps close: the issue's goal on the first try is 0.95).
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.runtime.fixtures.heldout_round3.program import STYLES
from tests.runtime.fixtures.heldout_round4.programs import PROGRAMS, REWRITES
from tests.runtime.fixtures.heldout_round4.workspaces import PACKAGES

FIRST_TRY_FLOOR = 0.95  # the share identical on the first try (the goal; 147 of 152 at merge)
AFTER_REWRITE_FLOOR = 0.99  # identical on the first try or after the one stored rewrite (152 of 152 at merge)


def test_the_corpus_covers_three_languages_and_several_styles():
    assert len(PROGRAMS) >= 110
    per_space = Counter(p.workspace for p in PROGRAMS.values())
    assert set(per_space) == set(PACKAGES) and min(per_space.values()) >= 30, per_space
    assert len({PACKAGES[s].language for s in per_space}) >= 3
    per_style = Counter(p.style for p in PROGRAMS.values())
    assert set(per_style) == set(STYLES) and min(per_style.values()) >= 15, per_style


def test_every_rewrite_belongs_to_a_program():
    assert set(REWRITES) <= set(PROGRAMS)
    assert all(REWRITES[n].strip() != PROGRAMS[n].code.strip() for n in REWRITES)


@pytest.mark.parametrize("name", list(PROGRAMS) + [f"{n} (rewrite)" for n in REWRITES])
def test_every_program_is_python_that_compiles(name):
    code = REWRITES[name.removesuffix(" (rewrite)")] if name.endswith(" (rewrite)") else PROGRAMS[name].code
    compile(code, name, "exec")


def test_the_packages_are_pinned_by_version_and_checksum():
    for package in PACKAGES.values():
        assert ("==" in package.spec) if package.registry == "pypi" else ("@" in package.spec.lstrip("@"))
        assert len(package.sha256) == 64 and package.archive.endswith((".tar.gz", ".tgz"))


@pytest.mark.slow
@pytest.mark.usefixtures("venv_dir")  # the launcher's venv, shared with the other launcher tests
def test_no_silent_wrong_answer_and_the_rates(capsys: pytest.CaptureFixture[str]):
    """The whole corpus through the stamped launcher (downloads the pinned packages on first use)."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "benchmarks"))
    from bench_heldout import ROUNDS, after_rewrite, category, run_round, table

    verdicts, rewritten, _seconds = run_round(ROUNDS[4], list(PROGRAMS))
    with capsys.disabled():
        print("\n" + table(verdicts, ROUNDS[4], rewritten))
    silent = [f"{v.name}: {v.detail}" for v in [*verdicts, *rewritten.values()] if v.silent_wrong]
    assert not silent, "\n".join(silent)
    rate = sum(v.identical for v in verdicts) / len(verdicts)
    failing = "\n".join(f"{v.name}: {category(v)}" for v in verdicts if not v.identical)
    assert rate >= FIRST_TRY_FLOOR, f"first try {rate:.1%} < {FIRST_TRY_FLOOR:.0%}:\n{failing}"
    assert after_rewrite(verdicts, rewritten) / len(verdicts) >= AFTER_REWRITE_FLOOR
