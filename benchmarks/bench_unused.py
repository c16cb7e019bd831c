"""A run costs what it uses (issue 44): MCP tools configured, the caller's environment, concurrent runs, discovery.

All through the stamped launcher in a repository stamped by the real ``copier copy``, side by side in one run:
  tools        a warm trivial run with one server of 1, 10, 100 and 1,000 tools configured (the test raw server,
               tests/mcp/servers/raw_server.py, ``RAW_TOOL_COUNT``), each against the same run with none (<= 1.2x)
  environment  a warm run calling an MCP tool whose environment changes between runs: only what a shell changes
               by itself (``OLDPWD``: no server starts), or a token (the server starts again, as it must), against
               the same run with an unchanged environment
  concurrency  1, 2 and 4 clients at once, each running tool-heavy programs (N ``view`` calls) on the warm
               server: runs per second (grows with the CPUs), and how long a one-call run takes meanwhile against
               the machine idle (<= 2x with fewer long runs than CPUs)
  discover     ``codeact discover`` of 1, 10 and 100 servers against max(the slowest server listed alone by the
               SDK client, the servers' own CPU summed / cores) (<= 1.3x)

    python benchmarks/bench_unused.py [--runs 5] [--quick] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from tests.conftest import git  # noqa: E402
from userpath import (  # noqa: E402
    LAUNCHER,
    ROOT,
    TABLE_HEAD,
    Timing,
    UserRepo,
    machine_load,
    ms,
    row,
    scratch,
    stamp_repo,
    time_processes,
)

RAW_SERVER = ROOT / "tests" / "mcp" / "servers" / "raw_server.py"
SCHEMA = '{"type": "object", "properties": {"x": {"type": "integer"}}}'
TARGET_TOOLS = 1.2  # a warm trivial run with 1,000 MCP tools configured <= 1.2x the run with none
TARGET_SHORT_WAIT = 2.0  # with fewer long runs than CPUs, a short run waits <= 2x its idle time
TARGET_DISCOVER = 1.3  # discover <= 1.3x max(slowest server alone, servers' CPU summed / cores)


def raw(count: int, **env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(RAW_SERVER)],
            "env": {"RAW_SCHEMA": SCHEMA, "RAW_TOOL_COUNT": str(count), **env}}


def with_servers(repo: UserRepo, name: str, servers: dict[str, Any]) -> UserRepo:
    """A copy of ``repo`` (same venv, launcher and home) configuring ``servers``, discovered."""
    dest = repo.root / name
    shutil.copytree(repo.repo, dest, symlinks=True)
    (dest / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
    done = subprocess.run([str(dest / LAUNCHER), "discover"], cwd=dest, env={**repo.base_env, "CODEACT_SERVER": "0"},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"codeact discover failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", name)
    return UserRepo(repo.root, dest, repo.venv, repo.python, repo.base_env, repo.server)


def tools_rows(base: UserRepo, runs: int) -> list[str]:
    repos = {0: base} | {n: with_servers(base, f"tools-{n}", {"big": raw(n)}) for n in (1, 10, 100, 1000)}
    for repo in repos.values():
        repo.start_server()
    try:
        cmds = {str(n): (repo.run_cmd("1"), repo.env("warm")) for n, repo in repos.items()}
        servers = {str(n): repo.server_pid() for n, repo in repos.items()}
        # each repository is its own workspace: the runs take turns, each on its own warm server
        timed = {}
        for n, repo in repos.items():
            timed.update(time_processes({str(n): cmds[str(n)]}, runs, cwd=repo.repo, check_out={str(n): "1"},
                                        servers={str(n): servers[str(n)]}))
        cold = {n: time_processes({"c": (repo.run_cmd("1"), repo.env("cold"))}, runs, cwd=repo.repo)["c"]
                for n, repo in repos.items() if n in (0, 1000)}
    finally:
        for repo in repos.values():
            repo.stop_server()
    none = timed["0"]
    out = [row(f"warm trivial run, one server of {n:,} MCP tools configured", ms(timed[str(n)]),
               f"{ms(none)} none configured", timed[str(n)].wall_ms / none.wall_ms,
               TARGET_TOOLS if n == 1000 else None) for n in (1, 10, 100, 1000)]
    out.append(row("cold trivial run, 1,000 MCP tools configured", ms(cold[1000]), f"{ms(cold[0])} none configured",
                   cold[1000].wall_ms / cold[0].wall_ms, None))
    return out


def environment_rows(base: UserRepo, runs: int) -> list[str]:
    repo = with_servers(base, "env", {"demo": raw(1)})
    code = "demo.thing(x=1)"
    env = repo.env("warm")
    repo.start_server()
    try:
        pid = repo.server_pid()
        cmds = {"same-a": (repo.run_cmd(code), env), "same-b": (repo.run_cmd(code), env),
                "cd-a": (repo.run_cmd(code), {**env, "OLDPWD": "/a", "SHLVL": "2"}),
                "cd-b": (repo.run_cmd(code), {**env, "OLDPWD": "/b", "SHLVL": "3"}),
                "token-a": (repo.run_cmd(code), {**env, "API_TOKEN": "a"}),
                "token-b": (repo.run_cmd(code), {**env, "API_TOKEN": "b"})}
        timed: dict[str, Timing] = {}
        for pair in (("same-a", "same-b"), ("cd-a", "cd-b"), ("token-a", "token-b")):
            timed.update(time_processes({k: cmds[k] for k in pair}, runs, cwd=repo.repo,
                                        servers={k: pid for k in pair}))
    finally:
        repo.stop_server()
    same = timed["same-a"]
    return [row("warm run calling an MCP tool, OLDPWD and SHLVL change between runs (no server starts)",
                ms(timed["cd-a"]), f"{ms(same)} unchanged environment", timed["cd-a"].wall_ms / same.wall_ms, None),
            row("warm run calling an MCP tool, a token changes between runs (the server starts again)",
                ms(timed["token-a"]), f"{ms(same)} unchanged environment", timed["token-a"].wall_ms / same.wall_ms,
                None)]


def concurrency_rows(base: UserRepo, calls: int, seconds: float) -> list[str]:
    repo = base
    long_run = repo.run_cmd(f"n = 0\nfor i in range({calls}):\n    n += len(view(path='README.md'))\nprint(n)")
    short_run = repo.run_cmd("print(len(view(path='README.md')))")
    env = repo.env("warm")
    repo.start_server()

    def once(cmd: list[str]) -> float:
        began = time.perf_counter()
        subprocess.run(cmd, cwd=repo.repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True)
        return time.perf_counter() - began

    try:
        for _ in range(3):
            once(short_run)
        idle = statistics.median(once(short_run) for _ in range(7))
        out = []
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        for clients in (1, 2, 4):
            done = [0]
            stop = time.monotonic() + seconds

            def client() -> None:
                while time.monotonic() < stop:
                    once(long_run)
                    done[0] += 1

            threads = [threading.Thread(target=client) for _ in range(clients)]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            time.sleep(min(1.0, seconds / 4))
            waits = [once(short_run) for _ in range(5)]
            for thread in threads:
                thread.join()
            rate = done[0] / (time.perf_counter() - began)
            wait = statistics.median(waits)
            per_cpu = clients / cpus
            target = TARGET_SHORT_WAIT if clients < cpus else None
            out.append(row(f"{clients} client(s) of {calls:,}-view runs: throughput", f"{rate:.2f} runs/s", "",
                           None, None))
            out.append(row(f"a 1-view run while {clients} long run(s) go on ({per_cpu:.1f} per CPU)",
                           f"{wait * 1000:.0f} ms", f"{idle * 1000:.0f} ms idle", wait / idle, target))
        return out
    finally:
        repo.stop_server()


def server_alone(count: int) -> tuple[float, float]:
    """Wall and CPU seconds of one raw server's process tree when the SDK client starts it and lists its tools."""
    script = (
        "import asyncio, resource, sys, time\n"
        "from mcp import ClientSession, StdioServerParameters\nfrom mcp.client.stdio import stdio_client\n"
        "async def main():\n"
        f"    p = StdioServerParameters(command=sys.executable, args=[{str(RAW_SERVER)!r}], "
        f"env={{'RAW_SCHEMA': {SCHEMA!r}, 'RAW_TOOL_COUNT': '{count}', 'PATH': '/usr/bin:/bin'}})\n"
        "    t = time.perf_counter()\n"
        "    async with stdio_client(p) as (r, w):\n"
        "        async with ClientSession(r, w) as s:\n"
        "            await s.initialize(); await s.list_tools()\n"
        "    return time.perf_counter() - t\n"
        "wall = asyncio.run(main())\nu = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(wall, u.ru_utime + u.ru_stime)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def discover_rows(base: UserRepo, runs: int, counts: tuple[int, ...]) -> list[str]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    alone = [server_alone(10) for _ in range(max(3, runs))]
    slowest = statistics.median(w for w, _ in alone)
    cpu_one = statistics.median(c for _, c in alone)
    out = []
    for count in counts:
        repo = with_servers(base, f"discover-{count}", {f"s{i}": raw(10) for i in range(count)})
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            repo.codeact("discover", mode="cold", timeout=600)
            times.append(time.perf_counter() - began)
        wall = statistics.median(times)
        floor = max(slowest, cpu_one * count / cores)
        out.append(row(f"`codeact discover`, {count} servers of 10 tools (whole command)", f"{wall * 1000:.0f} ms",
                       f"{floor * 1000:.0f} ms max(one alone, {count} x {cpu_one * 1000:.0f} ms CPU / {cores})",
                       wall / floor, TARGET_DISCOVER))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="a small run (for the smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    counts: tuple[int, ...] = (1, 10, 100)
    runs, calls, seconds = args.runs, 1000, 10.0
    if args.quick:
        runs, calls, seconds, counts = 1, 100, 3.0, (1, 10)
    root = scratch("codeact-bench-unused-")
    try:
        base = stamp_repo(root)
        if not base.server:
            raise SystemExit("this runtime has no warm server: nothing to measure")
        sections = {"tools": tools_rows(base, runs), "environment": environment_rows(base, runs),
                    "concurrency": concurrency_rows(base, calls, seconds),
                    "discover": discover_rows(base, max(1, runs // 2), counts)}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"The stamped launcher in stamped git repositories; medians of {runs} runs taking turns; {machine_load()}\n")
    print(TABLE_HEAD)
    for rows in sections.values():
        print("\n".join(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(sections, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
