"""The PyPI peers, installed into benchmark venvs and measured side by side with codeact (bench_runtime.py).

Each peer gets its own venv under ``.ci-cache/bench-peers/NAME`` (reused while its pinned requirement is the same);
where PyPI cannot be reached the rows say so and the benchmark goes on. The seed implementation (the hand-installed
plugin's ``codeact.py``) is GitHub-only, so it is not vendored: given its path (``--seed PATH`` or
``CODEACT_BENCH_SEED``) it is measured the way its users ran it, a whole process per program, on the only
pydantic-monty it runs on (0.0.17); without it, its row says how to measure it (no recorded figure is shown).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import venv
from pathlib import Path

from userpath import ROOT, TABLE_HEAD, Timing, ms, row, time_processes

HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".ci-cache" / "bench-peers"
PEERS = {  # key -> (label, pip requirement)
    "afm": ("agent-framework-monty", "agent-framework-monty==1.0.0b261015"),
    "pah": ("pydantic-ai-harness CodeMode", "pydantic-ai-harness[code-mode]==0.62.0"),
}
SEED_ENV = "CODEACT_BENCH_SEED"  # the seed's codeact.py: GitHub-only, so never vendored here
SEED_REQUIREMENT = "pydantic-monty==0.0.17"  # its in-process API (Monty(code).run) is gone from later releases
SEED_LABEL = "the seed's `codeact.py`"
TARGET = 1.0  # ahead of the peers: codeact / peer <= 1x


def ensure(key: str, requirement: str | None = None) -> Path | str:
    """The peer's venv Python, installing it first if needed; a reason string where it cannot be installed."""
    requirement = requirement or PEERS[key][1]
    folder = CACHE / key
    stamp, python = folder / ".bench-requirement", folder / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text() == requirement:
        return python
    try:
        venv.create(folder, with_pip=True, clear=True)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               requirement], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"skipped: could not install {requirement} ({exc})"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        return f"skipped: could not install {requirement} from PyPI (unreachable?): {tail[0][:200]}"
    stamp.write_text(requirement)
    return python


def per_call(python: Path, key: str, small: Path, calls: int, runs: int) -> dict[str, float]:
    for _attempt in range(2):  # a peer's run killed on a loaded machine (no stderr) gets one more try
        done = subprocess.run([str(python), str(HERE / "peer_run.py"), key, "calls", str(small), str(calls),
                               str(runs)], capture_output=True, text=True, timeout=600)
        if done.returncode == 0:
            break
    if done.returncode != 0:
        raise SystemExit(f"{PEERS[key][0]} per-call run failed (exit {done.returncode}): {done.stderr[-800:]}")
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def seed_figures(python: Path, source: Path, small: Path, calls: int, runs: int) -> tuple[Timing, dict[str, float]]:
    """The seed's trivial run and its cost per ``view`` call, each program a whole process as its users ran it
    (``--auto --workspace``): N views minus the same loop over a local function, paired round by round. Every
    program's printed answer is checked."""
    scratch = small.parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "LANG": "C.UTF-8"}
    base = [str(python), str(source), "--auto", "--workspace", str(scratch), "--code"]
    start = time_processes({"seed": ([*base, "print(1)"], env)}, runs, cwd=scratch,
                           check_out={"seed": '"stdout": "1\\n"'})["seed"]
    loop = "n = 0\nfor i in range({n}):\n    n += len({call})\nprint(n)"
    local = "def same(path):\n    return 'x' * 30\n" + loop.format(n=calls, call=f"same(path={str(small)!r})")
    cmds = {"view": ([*base, loop.format(n=calls, call=f"view(path={str(small)!r})")], env),
            "local": ([*base, local], env)}
    timed = time_processes(cmds, max(3, runs), cwd=scratch,
                           check_out={"view": f'"stdout": "{calls * len(small.read_text())}\\n"',
                                      "local": f'"stdout": "{calls * 30}\\n"'})
    walls = [a - b for a, b in zip(timed["view"].samples, timed["local"].samples)]
    return start, {"view_us": statistics.median(walls) * 1000 / calls,
                   "view_cpu_us": (timed["view"].cpu_ms - timed["local"].cpu_ms) * 1000 / calls}


def _seed_row(small: Path, source: str | None, calls: int, runs: int
              ) -> tuple[str, tuple[Timing, dict[str, float]] | None]:
    """The seed's row in the peers' table, and its figures where it could be measured."""
    if not source:
        return (f"| {SEED_LABEL} | not measured | not measured | its source is GitHub-only (not vendored): give its "
                f"path with `--seed PATH` or `{SEED_ENV}` to measure it here |"), None
    path = Path(source).expanduser().resolve()
    if not path.is_file():
        return f"| {SEED_LABEL} | not measured | not measured | `{source}` (from --seed or {SEED_ENV}) is no file |", None
    python = ensure("seed", SEED_REQUIREMENT)
    if isinstance(python, str):
        return f"| {SEED_LABEL} | not measured | not measured | {python} |", None
    start, call = seed_figures(python, path, small, calls, runs)
    return (f"| {SEED_LABEL} (pydantic-monty {SEED_REQUIREMENT.split('==')[1]}, this run) | {ms(start)} | "
            f"{call['view_us']:.0f} µs (CPU {call['view_cpu_us']:.0f}) | a process per program; Monty in process, "
            "no limits set, plain Python tools |"), (start, call)


def rows(scratch: Path, *, calls: int, runs: int, ours_start: dict[str, Timing], ours_view_us: dict[str, float],
         seed: str | None = None) -> list[str]:
    """Markdown lines: the peers' figures, and codeact's (per mode: ``cold``, ``warm`` where measured) against each
    peer (target: ahead, <= 1x); the seed (``seed``: its codeact.py) beside them, for information."""
    scratch.mkdir(parents=True, exist_ok=True)
    small = scratch / "small.py"
    small.write_text("def f(x):\n    return x + 1\n")
    found: dict[str, tuple[Timing, dict[str, float]]] = {}
    skipped: list[str] = []
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "LANG": "C.UTF-8"}
    for key in PEERS:
        python = ensure(key)
        if isinstance(python, str):
            skipped.append(f"- {PEERS[key][0]}: {python}")
            continue
        start = time_processes({key: ([str(python), str(HERE / "peer_run.py"), key, "trivial"], env)}, runs,
                               cwd=scratch, check_out={key: "1"})[key]
        found[key] = (start, per_call(python, key, small, min(calls, 2000), max(3, runs)))
    modes = [m for m in ("cold", "warm") if m in ours_start and m in ours_view_us]
    lines = ["| implementation | trivial run, whole process | per `view` call (wall) | note |", "|---|---:|---:|---|"]
    lines += [f"| codeact, {m} (this run) | {ms(ours_start[m])} | {ours_view_us[m]:.0f} µs | through the launcher |"
              for m in modes]
    for key, (start, call) in found.items():
        lines.append(f"| {PEERS[key][0]} ({PEERS[key][1].split('==')[1]}, this run) | {ms(start)} | "
                     f"{call['view_us']:.0f} µs (CPU {call['view_cpu_us']:.0f}) | in process, async tools |")
    seed_row, seed_found = _seed_row(small, seed, calls, runs)
    lines += [seed_row, "", TABLE_HEAD]
    # the seed for information only: it is no maintained peer (no limits, no boundary)
    against: list[tuple[str, tuple[Timing, dict[str, float]], float | None]] = [
        (PEERS[key][0], figures, TARGET) for key, figures in found.items()]
    against += [(SEED_LABEL, seed_found, None)] if seed_found is not None else []
    for label, (start, call), target in against:
        for m in modes:
            lines.append(row(f"start-up: codeact {m} trivial run against {label}", ms(ours_start[m]), ms(start),
                             ours_start[m].wall_ms / start.wall_ms, target))
            lines.append(row(f"per `view` call: codeact {m} against {label}", f"{ours_view_us[m]:.0f} µs",
                             f"{call['view_us']:.0f} µs", ours_view_us[m] / call["view_us"], target))
    return lines + ([""] + skipped if skipped else [])


if __name__ == "__main__":
    sys.exit("run benchmarks/bench_runtime.py (it measures the peers side by side with codeact)")
