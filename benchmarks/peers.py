"""The PyPI peers, installed into benchmark venvs and measured side by side with codeact (bench_budgets.py).

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

from userpath import ROOT, Timing, time_processes

HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".ci-cache" / "bench-peers"
PEERS = {  # key -> (label, pip requirement)
    "afm": ("agent-framework-monty", "agent-framework-monty==1.0.0b261015"),
    "pah": ("pydantic-ai-harness CodeMode", "pydantic-ai-harness[code-mode]==0.62.0"),
}
SEED_ENV = "CODEACT_BENCH_SEED"  # the seed's codeact.py: GitHub-only, so never vendored here
SEED_REQUIREMENT = "pydantic-monty==0.0.17"  # its in-process API (Monty(code).run) is gone from later releases
SEED_LABEL = "the seed's `codeact.py`"


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


if __name__ == "__main__":
    sys.exit("run benchmarks/bench_budgets.py (it measures the peers side by side with codeact)")
