"""The held-out corpus through the stamped launcher: do programs models write give CPython's answer on the first try?

Each program of tests/runtime/fixtures/heldout_programs.py runs once through ``.codeact/bin/codeact run --json``
in a git repository stamped by the real ``copier copy`` that holds a real repository (the vendored psf/requests
subset, or ``--repo PATH``: a checkout's text files), and once in CPython with the reference tools
(tests/runtime/corpus_oracle.py). A run is identical when its value, stdout and stderr are CPython's; a silent
wrong answer is one that differs with exit 0, no error, no note and no cut. ``main()`` prints a markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "runtime"))
sys.path.insert(0, str(HERE.parent))  # tests.runtime: the corpus and its oracle

from tests.runtime.corpus_oracle import (  # noqa: E402
    SUBSET_SOURCE,
    Verdict,
    judge,
    repo_files,
    run_in_cpython_streams,
    subset_files,
)
from tests.runtime.fixtures.heldout_programs import PROGRAMS, QUICK  # noqa: E402
from userpath import UserRepo, scratch, stamp_repo  # noqa: E402


def run_judged(repo: UserRepo, warm: bool, name: str, code: str) -> Verdict:
    """Run ``code`` once through ``repo``'s launcher (``--json``) and once in CPython with the reference tools over
    the same checkout; the verdict compares them. A program CPython cannot run stops the benchmark (the corpus's
    bug, not the sandbox's)."""
    try:
        expected = run_in_cpython_streams(code, repo.repo, dict(repo.env("cold")))
    except Exception as exc:  # noqa: BLE001 - whatever CPython raised is named
        raise SystemExit(f"{name}: CPython fails on it ({type(exc).__name__}: {exc})") from None
    done = subprocess.run([*repo.run_cmd(code), "--json"], cwd=repo.repo, text=True, capture_output=True,
                          env=repo.env("warm" if warm else "cold"), stdin=subprocess.DEVNULL, timeout=300)
    try:
        shown = json.loads(done.stdout)
    except ValueError:
        shown = {"ok": False, "error": {"message": done.stderr[-500:]}}
    return judge(name, expected, done.returncode, shown)


def run_corpus(repo_path: Path | None, names: list[str]) -> tuple[list[Verdict], float, str]:
    """Stamp a repository holding the real files, run ``names`` through its launcher (warm server where the
    runtime has one) and judge each against CPython; returns the verdicts, the seconds taken and the source."""
    files = repo_files(repo_path) if repo_path else subset_files()
    source = str(repo_path) if repo_path else SUBSET_SOURCE
    root = scratch("codeact-bench-corpus-")
    try:
        repo = stamp_repo(root, files=files)
        warm = repo.start_server()
        started = time.perf_counter()
        try:
            verdicts = [run_judged(repo, warm, name, PROGRAMS[name]) for name in names]
        finally:
            repo.stop_server()
        return verdicts, time.perf_counter() - started, source
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table(verdicts: list[Verdict], source: str) -> str:
    """The markdown table of a corpus run."""
    total = len(verdicts)
    same = sum(v.identical for v in verdicts)
    silent = sum(v.silent_wrong for v in verdicts)
    loud = total - same - silent
    pct = 100.0 * same / total if total else 0.0
    lines = [f"Held-out corpus: {total} programs over {source}, each checked against CPython with the reference "
             "tools.", "", "| measure | value |", "|---|---|",
             f"| identical on first try | {same}/{total} ({pct:.1f}%) |",
             f"| failed or said so (error, note, cut) | {loud} |",
             f"| silent wrong answers | {silent} |"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, help="a checkout to run over (default: the vendored requests subset)")
    parser.add_argument("--quick", action="store_true", help="only the quick subset")
    parser.add_argument("--json", metavar="PATH", help="also write the verdicts as JSON")
    args = parser.parse_args(argv)
    names = QUICK if args.quick else list(PROGRAMS)
    verdicts, seconds, source = run_corpus(args.repo, names)
    print(table(verdicts, source))
    same = sum(v.identical for v in verdicts)
    print(f"\nidentical on first try: {same}/{len(verdicts)} ({100.0 * same / max(1, len(verdicts)):.1f}%)")
    print(f"silent wrong answers: {sum(v.silent_wrong for v in verdicts)}")
    return finish(verdicts, seconds, args.json, lambda v: "SILENT WRONG" if v.silent_wrong else "loud")


def finish(verdicts: list[Verdict], seconds: float, json_path: str | None, label: Callable[[Verdict], str]) -> int:
    """List each failure (``label``: its kind) and the time on stderr, write the verdicts to ``json_path`` if
    given; the exit status: 1 on any silent wrong answer."""
    for v in verdicts:
        if not v.identical:
            print(f"- {v.name}: {label(v)}: {v.detail}", file=sys.stderr)
    print(f"({seconds:.1f} s through the launcher)", file=sys.stderr)
    if json_path:
        Path(json_path).write_text(json.dumps([v._asdict() for v in verdicts], indent=2) + "\n")
    return 0 if not any(v.silent_wrong for v in verdicts) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
