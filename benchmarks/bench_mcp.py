"""MCP on the user's path: a run calling one MCP tool, per-call cost, and parallel discovery, through the launcher.

All in a git repository stamped by the real ``copier copy``, through ``.codeact/bin/codeact``, with the test demo
server (tests/mcp/servers/demo_server.py, the official SDK's FastMCP) in ``.mcp.json``; cold (``CODEACT_SERVER=0``)
and warm (``codeact server start`` first; "n/a" where the runtime has no server). Side by side in one run:
  one tool   `codeact run --code 'demo.echo(text="hi")'` whole process (SDK import and server start included),
             against a trivial run in the same mode, a direct SDK client and a raw stdlib JSON-RPC client
             (benchmarks/mcp_clients.py) making the same call on the same server, whole process
  per call   a run timing rounds of N echo calls on its open session (the sandbox's time.perf_counter), median
             per call, against the two direct clients timing rounds of N calls on their open session, taking turns
             (--runs passes, median of the passes); and, for
             information, a whole run making N calls minus one making the same loop over a local function (both
             call echo once first: ~2.4 s cold processes, whose noise of ~0.1 s is ~300 µs a call at 300 calls)
  discovery  `codeact discover` of 5 stdlib servers that each take 0.5 s to start, against 1 of them (<= 1.3x)

    python benchmarks/bench_mcp.py [--runs 4] [--calls 300] [--quick] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the repository: tests.conftest

from tests.conftest import git, make_repo  # noqa: E402
from userpath import (  # noqa: E402
    DEMO_SERVER,
    ROOT,
    TABLE_HEAD,
    Timing,
    UserRepo,
    ms,
    na_row,
    row,
    scratch,
    stamp_repo,
    time_processes,
)

HERE = Path(__file__).resolve().parent
RAW_SERVER = ROOT / "tests" / "mcp" / "servers" / "raw_server.py"
TARGET_ONE_TOOL = 1.5  # warm run calling one MCP tool <= 1.5x a warm trivial run
TARGET_CALL = 1.2  # per MCP call <= 1.2x a direct SDK client
TARGET_DISCOVERY = 1.3  # 5 servers x 0.5 s discovered <= 1.3x one
ECHO = 'demo.echo(text="hi")'
ROUNDS = 3  # timed rounds of N calls in each per-call process (its median)


def loop(calls: int, call: str) -> str:
    return (f"{ECHO}\ndef same(text):\n    return 'x'\n"
            f"n = 0\nfor i in range({calls}):\n    n += len({call})\nprint(n)")


def timed_rounds(calls: int, rounds: int) -> str:
    """A program that times ``rounds`` rounds of ``calls`` echo calls on its open session, as the direct clients do,
    and prints each round's µs per call (a JSON list), after checking every answer."""
    return (f"import time\n{ECHO}\nrounds = []\nfor r in range({rounds}):\n    n = 0\n"
            f"    t = time.perf_counter()\n    for i in range({calls}):\n        n += len({ECHO})\n"
            f"    rounds.append((time.perf_counter() - t) / {calls} * 1e6)\n"
            f"    if n != {2 * calls}:\n        raise ValueError(n)\nprint(rounds)")


def in_run(repo: UserRepo, mode: str, calls: int, rounds: int) -> float:
    """Median µs per call over the rounds of :func:`timed_rounds`, in one run."""
    import statistics

    done = subprocess.run(repo.run_cmd(timed_rounds(calls, rounds)), capture_output=True, text=True,
                          env=repo.env(mode), cwd=repo.repo, stdin=subprocess.DEVNULL, timeout=600)
    try:
        per_round = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SystemExit(f"the {mode} timed run failed ({done.returncode}): {done.stdout[-500:]}"
                         f"{done.stderr[-800:]}") from None
    if done.returncode != 0 or len(per_round) != rounds:
        raise SystemExit(f"the {mode} timed run failed ({done.returncode}): {done.stderr[-800:]}")
    return float(statistics.median(per_round))


def client(repo: UserRepo, kind: str, calls: int, rounds: int) -> list[str]:
    py = str(repo.python)
    return [py, *(["-S"] if kind == "raw" else []), str(HERE / "mcp_clients.py"), kind, str(calls), str(rounds),
            sys.executable, str(DEMO_SERVER)]


def one_tool(repo: UserRepo, runs: int, warm: bool) -> dict[str, Timing]:
    cmds = {f"{mode}:{what}": (repo.run_cmd(code), repo.env(mode))
            for mode in (("cold", "warm") if warm else ("cold",)) for what, code in (("trivial", "1"), ("mcp", ECHO))}
    cmds["sdk"] = (client(repo, "sdk", 0, 0), repo.env("cold"))
    cmds["raw"] = (client(repo, "raw", 0, 0), repo.env("cold"))
    server = repo.server_pid() if warm else None
    return time_processes(cmds, runs, cwd=repo.repo, check_out={"cold:mcp": "hi", "warm:mcp": "hi"},
                          servers={"warm:trivial": server, "warm:mcp": server})


def per_call(repo: UserRepo, runs: int, calls: int, warm: bool) -> dict[str, float]:
    cmds = {}
    for mode in ("cold", "warm") if warm else ("cold",):
        cmds[f"{mode}:n"] = (repo.run_cmd(loop(calls, ECHO)), repo.env(mode))
        cmds[f"{mode}:0"] = (repo.run_cmd(loop(calls, 'same(text="hi")')), repo.env(mode))
    server = repo.server_pid() if warm else None
    timed = time_processes(cmds, runs, cwd=repo.repo, servers={"warm:n": server, "warm:0": server})
    out = {f"{mode}:whole": (timed[f"{mode}:n"].wall_ms - timed[f"{mode}:0"].wall_ms) * 1000 / calls
           for mode in ("cold", "warm") if f"{mode}:n" in timed}
    # The runs and the direct clients take turns, pass after pass (the median of each's passes): measured one after
    # the other once each, a change of load between them (other work on the machine) moved the ratio by 0.1-0.9.
    import statistics

    samples: dict[str, list[float]] = {}
    for _ in range(max(1, runs)):
        for mode in ("cold", "warm") if warm else ("cold",):
            samples.setdefault(mode, []).append(in_run(repo, mode, calls, ROUNDS))
        for kind in ("sdk", "raw"):
            done = subprocess.run(client(repo, kind, calls, ROUNDS), capture_output=True, text=True, check=True,
                                  env=repo.env("cold"), cwd=repo.repo)
            samples.setdefault(kind, []).append(json.loads(done.stdout)["per_call_us"])
    out.update({what: float(statistics.median(values)) for what, values in samples.items()})
    return out


def discovery(repo: UserRepo, runs: int) -> dict[str, float]:
    """`codeact discover --workspace W` whole command: W configures 5 slow-starting servers, or 1."""
    import statistics

    times: dict[str, list[float]] = {"one": [], "five": []}
    folders = {}
    for name, count in (("one", 1), ("five", 5)):
        ws = make_repo(repo.root / f"discover-{name}")
        servers = {f"s{i}": {"command": sys.executable, "args": [str(RAW_SERVER)],
                             "env": {"RAW_START_DELAY": "0.5",
                                     "RAW_SCHEMA": '{"type": "object", "properties": {"x": {"type": "integer"}}}'}}
                   for i in range(count)}
        (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "servers")
        folders[name] = ws
    for i in range(runs + 1):
        for name, ws in folders.items():
            t0 = time.perf_counter()
            repo.codeact("discover", "--workspace", str(ws), mode="cold", timeout=120)
            if i:
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) * 1000 for name, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4, help="runs per process measurement (median)")
    parser.add_argument("--calls", type=int, default=300, help="MCP calls in the per-call programs")
    parser.add_argument("--quick", action="store_true", help="a small run (for the smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.calls = 1, 30

    root = scratch("codeact-bench-mcp-")
    demo = {"type": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)]}
    try:
        repo = stamp_repo(root, mcp={"demo": demo})
        warm = repo.start_server()
        try:
            whole = one_tool(repo, args.runs, warm)
            calls = per_call(repo, args.runs, args.calls, warm)
        finally:
            repo.stop_server()
        found = discovery(repo, max(1, args.runs // 2))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print(f"The stamped launcher in a stamped git repository; the demo server (FastMCP) over stdio; medians of "
          f"{args.runs} runs taking turns; clients run with the launcher's venv Python\n")
    print(TABLE_HEAD)
    w = whole.get
    if warm:
        print(row("warm run calling one MCP tool", ms(whole["warm:mcp"]), f"{ms(whole['warm:trivial'])} warm trivial run",
                  whole["warm:mcp"].wall_ms / whole["warm:trivial"].wall_ms, TARGET_ONE_TOOL))
    else:
        print(na_row("warm run calling one MCP tool", TARGET_ONE_TOOL))
    print(row("cold run calling one MCP tool (SDK import, server start)", ms(whole["cold:mcp"]),
              f"{ms(whole['cold:trivial'])} cold trivial run", whole["cold:mcp"].wall_ms / whole["cold:trivial"].wall_ms,
              None))
    for mode in ("cold", "warm"):
        if w(f"{mode}:mcp") is None:
            continue
        for kind, label in (("sdk", "direct SDK client"), ("raw", "raw stdlib JSON-RPC client")):
            print(row(f"{mode} run calling one MCP tool, against a whole {label}", ms(whole[f"{mode}:mcp"]),
                      f"{ms(whole[kind])} {label}", whole[f"{mode}:mcp"].wall_ms / whole[kind].wall_ms, None))
    print()
    print(TABLE_HEAD)
    for mode in ("cold", "warm"):
        if mode not in calls:
            print(na_row(f"{mode}: MCP `echo` per call, in a run", TARGET_CALL))
            continue
        print(row(f"{mode}: MCP `echo` per call, in a run ({args.calls} calls a round)", f"{calls[mode]:.0f} µs",
                  f"{calls['sdk']:.0f} µs direct SDK client", calls[mode] / calls["sdk"], TARGET_CALL))
        print(row(f"{mode}: the same, against a raw stdlib JSON-RPC client", f"{calls[mode]:.0f} µs",
                  f"{calls['raw']:.0f} µs raw client", calls[mode] / calls["raw"], None))
        by_runs = calls[f"{mode}:whole"]
        print(row(f"{mode}: the same by whole runs ({args.calls} calls minus a local-function loop)",
                  f"{by_runs:.0f} µs", f"{calls['sdk']:.0f} µs direct SDK client", by_runs / calls["sdk"], None))
    print(row("`codeact discover`, 5 servers x 0.5 s start (whole command)", f"{found['five']:.0f} ms",
              f"{found['one']:.0f} ms 1 server", found["five"] / found["one"], TARGET_DISCOVERY))
    if args.json:
        Path(args.json).write_text(json.dumps({"one_tool": {k: vars(v) for k, v in whole.items()},
                                               "per_call_us": calls, "discover_ms": found, "server": warm},
                                              indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
