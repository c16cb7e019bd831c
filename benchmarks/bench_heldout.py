"""A held-out corpus through the stamped launcher: first-try rate, silent and loud counts, rate after one rewrite.

Each program of tests/runtime/fixtures/heldout_round3/ (``--round 3``: flask, zod, ujson) or heldout_round4/
(``--round 4``: attrs, commander, tree-sitter-json) asks a question of a real published repository (pinned
packages that the round's workspaces.py downloads with pip or npm into a cache). Per repository, a git repository stamped by the real ``copier copy`` holds its text files; each
program runs once through ``.codeact/bin/codeact run --json`` there and once in CPython with the reference tools
(tests/runtime/corpus_oracle.py). Identical: same value, stdout and stderr. Loud: an error, a note or a cut.
Silent: a different answer with exit 0 and nothing said. Round 4 also stores, for each program that failed loudly,
the one rewrite a model wrote after reading only what the run printed; it runs the same way, and the rate after one
rewrite counts a program right when its first try or its rewrite is identical (a silent failure gets no rewrite:
the model does not know). ``main()`` prints a Markdown table (run_all.py stores it
in RESULTS.md) and lists every failure with what the run said on stderr; it exits 1 on any silent wrong answer.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "runtime"))
sys.path.insert(0, str(HERE.parent))  # tests.runtime: the corpus and its oracle

from bench_corpus import finish, run_judged  # noqa: E402
from tests.runtime.corpus_oracle import Verdict, repo_files  # noqa: E402
from tests.runtime.fixtures.heldout_round3 import programs as round3  # noqa: E402
from tests.runtime.fixtures.heldout_round3 import workspaces as round3_spaces  # noqa: E402
from tests.runtime.fixtures.heldout_round3.program import Program  # noqa: E402
from tests.runtime.fixtures.heldout_round4 import programs as round4  # noqa: E402
from tests.runtime.fixtures.heldout_round4 import workspaces as round4_spaces  # noqa: E402
from userpath import scratch, stamp_repo  # noqa: E402


class Round(NamedTuple):
    """One held-out corpus: its programs, the packages they ask about, and the rewrites after a loud first try."""

    number: int
    programs: Mapping[str, Program]
    packages: Mapping[str, round3_spaces.Package]
    describe: Callable[[str], str]
    workspace: Callable[[str], Path]
    rewrites: Mapping[str, str] | None  # None: the round stores no rewrites


ROUNDS: dict[int, Round] = {
    3: Round(3, round3.PROGRAMS, round3_spaces.PACKAGES, round3_spaces.describe, round3_spaces.workspace, None),
    4: Round(4, round4.PROGRAMS, round4_spaces.PACKAGES, round4_spaces.describe, round4_spaces.workspace,
             round4.REWRITES),
}
PROGRAMS = round3.PROGRAMS  # round 3's, as test_heldout_round3 and older callers read them


def run_round(rnd: Round, names: list[str]) -> tuple[list[Verdict], dict[str, Verdict], float]:
    """Run ``names`` of ``rnd`` workspace by workspace (one stamped repository each, warm server where the runtime
    has one), then the stored rewrite of each that failed loudly; returns the first-try verdicts in the order of
    ``names``, the rewrites' verdicts by program name, and the seconds spent running programs."""
    by_workspace: dict[str, list[str]] = {}
    for name in names:
        by_workspace.setdefault(rnd.programs[name].workspace, []).append(name)
    verdicts: dict[str, Verdict] = {}
    rewritten: dict[str, Verdict] = {}
    seconds = 0.0
    for space, members in by_workspace.items():
        root = scratch(f"codeact-bench-heldout-{space}-")
        try:
            repo = stamp_repo(root, files=repo_files(rnd.workspace(space)))
            warm = repo.start_server()
            started = time.perf_counter()
            try:
                for name in members:
                    verdicts[name] = first = run_judged(repo, warm, name, rnd.programs[name].code)
                    if first.loud and not first.identical and rnd.rewrites and name in rnd.rewrites:
                        rewritten[name] = run_judged(repo, warm, name, rnd.rewrites[name])
            finally:
                repo.stop_server()
            seconds += time.perf_counter() - started
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return [verdicts[n] for n in names], rewritten, seconds


def run_heldout(names: list[str]) -> tuple[list[Verdict], float]:
    """Round 3's ``names`` (no rewrites stored): the verdicts in the order of ``names`` and the seconds taken."""
    verdicts, _rewritten, seconds = run_round(ROUNDS[3], names)
    return verdicts, seconds


def category(verdict: Verdict) -> str:
    """A failure's kind: ``silent``, or what the run said, cut to the words that name the gap."""
    if verdict.silent_wrong:
        return "silent wrong answer"
    return verdict.said.split(" (line ")[0][:90]


def _commit() -> str:
    """The short commit whose template (and runtime) was stamped: ``$CODEACT_BENCH_REF`` where set (userpath's
    rule), else HEAD with ``+`` when the working tree differs from it."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True).stdout.strip()

    ref = os.environ.get("CODEACT_BENCH_REF")
    if ref:
        return git("rev-parse", "--short", ref)
    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def _pct(n: int, of: int) -> str:
    return f"{n} ({100.0 * n / of if of else 0.0:.1f}%)"


def after_rewrite(group: list[Verdict], rewritten: Mapping[str, Verdict]) -> int:
    """How many of ``group`` are right on the first try or after their one stored rewrite."""
    return sum(v.identical or (v.name in rewritten and rewritten[v.name].identical) for v in group)


def _row(label: str, group: list[Verdict], rewritten: Mapping[str, Verdict] | None) -> str:
    same = sum(v.identical for v in group)
    silent = sum(v.silent_wrong for v in group)
    row = f"| {label} | {len(group)} | {_pct(same, len(group))} | {len(group) - same - silent} | {silent} |"
    return row if rewritten is None else row + f" {_pct(after_rewrite(group, rewritten), len(group))} |"


def table(verdicts: list[Verdict], rnd: Round | None = None, rewritten: Mapping[str, Verdict] | None = None) -> str:
    """The Markdown table of a run of ``rnd`` (default round 3): all programs, then per repository and per model
    style; with ``rewritten`` (round 4) also the rate after one rewrite."""
    rnd = rnd or ROUNDS[3]
    programs = rnd.programs
    spaces = sorted({programs[v.name].workspace for v in verdicts})
    how = "no rewrite (first try only)" if rewritten is None else \
        "and, for each loud failure, the one rewrite a model wrote after reading what the run printed"
    lines = [f"Round-{rnd.number} held-out corpus at commit {_commit()}: {len(verdicts)} programs over "
             + "; ".join(rnd.describe(s) for s in spaces)
             + f", each checked against CPython with the reference tools; {how}.", "",
             "| programs | count | identical on first try | loud (error, note, cut) | silent wrong |"
             + ("" if rewritten is None else " right after one rewrite |"),
             "|---|---:|---:|---:|---:|" + ("" if rewritten is None else "---:|"), _row("all", verdicts, rewritten)]
    lines += [_row(f"repository {s}", [v for v in verdicts if programs[v.name].workspace == s], rewritten)
              for s in spaces]
    styles = sorted({programs[v.name].style for v in verdicts})
    lines += [_row(f"style {s}", [v for v in verdicts if programs[v.name].style == s], rewritten) for s in styles]
    failures = Counter(category(v) for v in verdicts if not v.identical)
    if failures:
        lines += ["", "| what a failing run said | programs |", "|---|---:|"]
        lines += [f"| {what.replace('|', '/')} | {n} |" for what, n in sorted(failures.items(),
                                                                              key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--round", type=int, choices=sorted(ROUNDS), default=3, dest="round_",
                        help="which corpus: 3 (flask, zod, ujson) or 4 (attrs, commander, tsjson); default 3")
    parser.add_argument("--workspace", choices=sorted({s for r in ROUNDS.values() for s in r.packages}),
                        action="append", help="only the programs about this repository (repeatable; default: all)")
    parser.add_argument("--json", metavar="PATH", help="also write the verdicts as JSON")
    args = parser.parse_args(argv)
    rnd = ROUNDS[args.round_]
    unknown = sorted(set(args.workspace or ()) - set(rnd.packages))
    if unknown:
        parser.error(f"round {rnd.number} has no workspace {', '.join(unknown)} (it has {', '.join(rnd.packages)})")
    names = [n for n, p in rnd.programs.items() if not args.workspace or p.workspace in args.workspace]
    verdicts, rewritten, seconds = run_round(rnd, names)
    print(table(verdicts, rnd, None if rnd.rewrites is None else rewritten))
    for name, v in rewritten.items():
        if not v.identical:
            print(f"- {name} after its rewrite: {'SILENT WRONG' if v.silent_wrong else category(v)}: {v.detail}",
                  file=sys.stderr)
    return finish(verdicts, seconds, args.json, lambda v: f"({rnd.programs[v.name].style}) {category(v)}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
