"""Start-up and per-tool-call cost of the runtime, against the floors it cannot beat.

Whole process, median of several runs, same interpreter:
  codeact run      python -m codeact run --code "1 + 1"  (type check included, as an agent runs it)
  import monty     python -c "import pydantic_monty"      (the library's own floor)
  bare python      python -S -c pass
Inside one run: 5,000 calls of a no-op tool, minus the same loop calling a sandbox-local function, per call.

    python benchmarks/bench_runtime.py [--runs 15] [--calls 5000] [--json results.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime"
TARGET_START = 1.3  # codeact run <= 1.3x import pydantic_monty
TARGET_CALL_US = 50.0


def time_processes(cmds: dict[str, list[str]], runs: int, *, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Median wall time of each command in milliseconds; the commands take turns, so all see the same load."""
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(runs + 1):  # the first round warms caches and is dropped
        for name, cmd in cmds.items():
            started = time.perf_counter()
            done = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
            if i:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def per_call_overhead(calls: int, repeats: int) -> dict[str, float]:
    """Microseconds per tool call inside a run, net of the sandbox's own loop cost.

    Three kinds of call, taking turns: a tool that starts no process (as view, create, edit, sql, web_fetch), one
    that may (glob, grep, bash, MCP and user tools: its thread gets every CPU back during the call, see
    codeact.backends.cpu), and the first again with CPU pinning off (CODEACT_PIN_CPU=0).
    """
    sys.path.insert(0, str(RUNTIME))
    from codeact.config import Settings
    from codeact.runner import run
    from codeact.tools.base import tool_from_function

    def noop(x: int = 0) -> int:
        """Return x."""
        return x

    spawning = tool_from_function(noop, source="user")
    tools = {"noop": spawning._replace(in_process=True), "spawning": spawning._replace(name="spawning")}
    loop = "n = 0\nfor i in range({calls}):\n    n += {call}(x=1)\nn"
    local = "def same(x=0):\n    return x\n" + loop.format(calls=calls, call="same")
    with tempfile.TemporaryDirectory() as ws:
        env = {"CODEACT_CONFIG_DIR": str(Path(ws) / "config"), "PATH": os.environ.get("PATH", "")}
        cases = {"in_process": (loop.format(calls=calls, call="noop"), env),
                 "spawning": (loop.format(calls=calls, call="spawning"), env),
                 "unpinned": (loop.format(calls=calls, call="noop"), {**env, "CODEACT_PIN_CPU": "0"}),
                 "local": (local, env)}

        def once(code: str, environ: dict[str, str]) -> tuple[float, float]:
            result = run(code, workspace=ws, backend="monty", tools=tools, settings=Settings(), environ=environ)
            assert result.ok and result.result == calls, result.error
            return result.duration_ms, sum(c.ms for c in result.tool_calls)

        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for i in range(repeats + 1):  # the first round warms up and is dropped
            for name, (code, environ) in cases.items():
                timing = once(code, environ)
                if i:
                    runs[name].append(timing)
    base = statistics.median(t for t, _ in runs["local"])
    figures = {"calls": calls, "local_loop_ms": base,
               "host_side_us": statistics.median(h for _, h in runs["in_process"]) * 1000 / calls}
    for name in ("in_process", "spawning", "unpinned"):
        figures[f"{name}_us"] = (statistics.median(t for t, _ in runs[name]) - base) * 1000 / calls
    figures["per_call_us"] = figures["in_process_us"]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per process measurement (median)")
    parser.add_argument("--calls", type=int, default=5000, help="tool calls in the per-call measurement")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / ".git").mkdir(parents=True)  # a repository, as in real use (no `git rev-parse` fallback)
        (ws / "README.md").write_text("# bench\n")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "LANG": "C.UTF-8", "PYTHONPATH": str(RUNTIME),
               "CODEACT_CONFIG_DIR": str(Path(tmp) / "config"), "CODEACT_BACKEND": "monty"}
        figures = time_processes({
            "codeact_run_ms": [py, "-m", "codeact", "run", "--code", "1 + 1"],
            "codeact_imports_ms": [py, "-c", "import codeact.cli, codeact.runner, codeact.toolset, "
                                             "codeact.backends.monty"],
            "import_monty_ms": [py, "-c", "import pydantic_monty"],
            "bare_python_ms": [py, "-S", "-c", "pass"],
        }, args.runs, cwd=ws, env=env)
    figures.update({f"call_{k}": v for k, v in per_call_overhead(args.calls, max(3, args.runs // 3)).items()})
    start_ratio = figures["codeact_run_ms"] / figures["import_monty_ms"]
    rows = [
        ("`codeact run` (whole process)", figures["codeact_run_ms"], f"{start_ratio:.2f}x monty import",
         f"<= {TARGET_START}x"),
        ("import codeact modules + monty", figures["codeact_imports_ms"],
         f"{figures['codeact_imports_ms'] / figures['import_monty_ms']:.2f}x monty import", ""),
        ('`python -c "import pydantic_monty"`', figures["import_monty_ms"],
         f"{figures['import_monty_ms'] / figures['bare_python_ms']:.2f}x bare", ""),
        ("`python -S -c pass`", figures["bare_python_ms"], "1.00x bare", ""),
    ]
    print(f"Python {sys.version.split()[0]} at {py}; medians of {args.runs} runs, taking turns\n")
    print("| measurement | ms | ratio | target |\n|---|---:|---:|---|")
    for name, ms, ratio, target in rows:
        print(f"| {name} | {ms:.1f} | {ratio} | {target} |")
    print(f"\n| per tool call ({args.calls} calls in one run) | µs/call | target |\n|---|---:|---|")
    print(f"| overhead, net of the sandbox loop: a tool that starts no process (view, create, edit, sql, web_fetch) "
          f"| {figures['call_in_process_us']:.1f} | <= {TARGET_CALL_US:g} |")
    print(f"| of which host side (runner dispatch + tool) | {figures['call_host_side_us']:.1f} | |")
    print(f"| a tool that may start processes (glob, grep, bash, MCP, user tools; CPUs widened for the call) "
          f"| {figures['call_spawning_us']:.1f} | (info) |")
    print(f"| the first, CPU pinning off (`CODEACT_PIN_CPU=0`) | {figures['call_unpinned_us']:.1f} | (info) |")
    figures["start_ratio"] = start_ratio
    if args.json:
        Path(args.json).write_text(json.dumps({"python": sys.version, "figures": figures}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
