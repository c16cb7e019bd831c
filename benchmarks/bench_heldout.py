"""The round-3 held-out corpus through the stamped launcher: first-try rate, silent and loud counts.

Each program of tests/runtime/fixtures/heldout_round3/ asks a question of a real published repository (flask,
zod, ujson: pinned packages that tests/runtime/fixtures/heldout_round3/workspaces.py downloads with pip or npm
into a cache). Per repository, a git repository stamped by the real ``copier copy`` holds its text files; each
program runs once through ``.codeact/bin/codeact run --json`` there and once in CPython with the reference tools
(tests/runtime/corpus_oracle.py). Identical: same value, stdout and stderr. Loud: an error, a note or a cut.
Silent: a different answer with exit 0 and nothing said. ``main()`` prints a Markdown table (run_all.py stores it
in RESULTS.md) and lists every failure with what the run said on stderr; it exits 1 on any silent wrong answer.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "runtime"))
sys.path.insert(0, str(HERE.parent))  # tests.runtime: the corpus and its oracle

from bench_corpus import finish, run_judged  # noqa: E402
from tests.runtime.corpus_oracle import Verdict, repo_files  # noqa: E402
from tests.runtime.fixtures.heldout_round3.programs import PROGRAMS  # noqa: E402
from tests.runtime.fixtures.heldout_round3.workspaces import PACKAGES, describe, workspace  # noqa: E402
from userpath import scratch, stamp_repo  # noqa: E402


def run_heldout(names: list[str]) -> tuple[list[Verdict], float]:
    """Run ``names`` workspace by workspace (one stamped repository each, warm server where the runtime has one);
    returns the verdicts in the order of ``names`` and the seconds spent running programs."""
    by_workspace: dict[str, list[str]] = {}
    for name in names:
        by_workspace.setdefault(PROGRAMS[name].workspace, []).append(name)
    verdicts: dict[str, Verdict] = {}
    seconds = 0.0
    for space, members in by_workspace.items():
        root = scratch(f"codeact-bench-heldout-{space}-")
        try:
            repo = stamp_repo(root, files=repo_files(workspace(space)))
            warm = repo.start_server()
            started = time.perf_counter()
            try:
                for name in members:
                    verdicts[name] = run_judged(repo, warm, name, PROGRAMS[name].code)
            finally:
                repo.stop_server()
            seconds += time.perf_counter() - started
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return [verdicts[n] for n in names], seconds


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


def _row(label: str, group: list[Verdict]) -> str:
    same = sum(v.identical for v in group)
    silent = sum(v.silent_wrong for v in group)
    pct = 100.0 * same / len(group) if group else 0.0
    return f"| {label} | {len(group)} | {same} ({pct:.1f}%) | {len(group) - same - silent} | {silent} |"


def table(verdicts: list[Verdict]) -> str:
    """The Markdown table of a run: all programs, then per repository and per model style."""
    spaces = sorted({PROGRAMS[v.name].workspace for v in verdicts})
    lines = [f"Round-3 held-out corpus at commit {_commit()}: {len(verdicts)} programs over "
             + "; ".join(describe(s) for s in spaces)
             + ", each checked against CPython with the reference tools; no rewrite (first try only).", "",
             "| programs | count | identical on first try | loud (error, note, cut) | silent wrong |",
             "|---|---:|---:|---:|---:|", _row("all", verdicts)]
    lines += [_row(f"repository {s}", [v for v in verdicts if PROGRAMS[v.name].workspace == s]) for s in spaces]
    styles = sorted({PROGRAMS[v.name].style for v in verdicts})
    lines += [_row(f"style {s}", [v for v in verdicts if PROGRAMS[v.name].style == s]) for s in styles]
    failures = Counter(category(v) for v in verdicts if not v.identical)
    if failures:
        lines += ["", "| what a failing run said | programs |", "|---|---:|"]
        lines += [f"| {what.replace('|', '/')} | {n} |" for what, n in sorted(failures.items(),
                                                                              key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", choices=sorted(PACKAGES), action="append",
                        help="only the programs about this repository (repeatable; default: all)")
    parser.add_argument("--json", metavar="PATH", help="also write the verdicts as JSON")
    args = parser.parse_args(argv)
    names = [n for n, p in PROGRAMS.items() if not args.workspace or p.workspace in args.workspace]
    verdicts, seconds = run_heldout(names)
    print(table(verdicts))
    return finish(verdicts, seconds, args.json, lambda v: f"({PROGRAMS[v.name].style}) {category(v)}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
