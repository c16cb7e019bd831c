"""The user budgets, measured in ONE run on the user's path, each with its peers side by side.

Everything runs through the stamped launcher (``.codeact/bin/codeact``) in a git repository stamped by the real
``copier copy`` (benchmarks/userpath.py), cold (``CODEACT_SERVER=0``) and warm (a server started first):

  warm trivial run       `codeact run --code '1'`, warm                         <= 50 ms
  cold trivial run       the same, cold (2 cores)                               <= 300 ms
  a tool call            a real `view` of a small file: N calls minus the same loop over a local function
                         , warm and cold                <= 100 µs
  the hook               the slowest scenario of the registered preToolUse/postToolUse/sessionStart entries, as the
                         Copilot CLI spawns them (bench_hook.py's scenarios)    <= 10 ms
  an MCP call            `demo.echo` on an open session in a run, against a direct MCP SDK client on the same
                         server                             <= the SDK client + 2 ms
  grep and glob          four searches over FILES files, warm, against `rg` with the same result count
                                                                                <= max(2x rg, rg + 100 ms)

Peers (benchmarks/peers.py): agent-framework-monty and pydantic-ai-harness CodeMode from PyPI, and the seed's
codeact.py where ``--seed PATH`` (or ``$CODEACT_BENCH_SEED``) gives it; each peer's ratio is codeact / peer for the
budgets a peer can run (a trivial run, a tool call); a peer without hooks, MCP or file search says so.

    python benchmarks/bench_budgets.py [--files 300000] [--runs 7] [--quick] [--no-peers] [--seed PATH]

Exit 1 when a budget is not met.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_hook  # noqa: E402
from userpath import DEMO_SERVER, Timing, UserRepo, machine_load, scratch, stamp_repo, time_processes  # noqa: E402

HERE = Path(__file__).resolve().parent

SMALL = "src/small.py"
ECHO = 'demo.echo(text="hi")'
EXTS = (".py", ".md", ".json", ".txt", ".js")
TREE = "tree"
# 10,000+ matches exceed the default 1 MiB tool-result limit, which would cut the list the program counts
LIMITS = {"CODEACT_TOOL_RESULT": str(64 * 2**20), "CODEACT_MEMORY": str(2**30), "CODEACT_TIMEOUT": "300"}
CASES = [  # name, program's call (its len() is printed), rg arguments (rg writes every match to a pipe)
    ("grep TODO", f'grep(pattern="TODO", path="{TREE}", max_results=10**7)', ["--regexp", "TODO", TREE]),
    ("grep `import os` in *.py", f'grep(pattern="^import os", path="{TREE}", glob="*.py", max_results=10**7)',
     ["--glob", "*.py", "--regexp", "^import os", TREE]),
    ("grep -i, no match", f'grep(pattern="zebra_[0-9]+", path="{TREE}", ignore_case=True, max_results=10**7)',
     ["--ignore-case", "--regexp", "zebra_[0-9]+", TREE]),
    ("glob **/*.py", f'glob(pattern="**/*.py", path="{TREE}")', ["--files", "--glob", "*.py", TREE]),
]


def view_call_us(repo: UserRepo, runs: int, calls: int, mode: str) -> float:
    """Microseconds per real ``view`` of a small file in ``mode``: a program making ``calls`` views minus the same
    loop over a sandbox-local function (both view once first), whole processes taking turns."""
    def loop(call: str) -> str:
        return (f'view(path="{SMALL}")\ndef same(path):\n    return "x" * 30\n'
                f"n = 0\nfor i in range({calls}):\n    n += len({call})\nprint(n)")

    cmds = {"n": (repo.run_cmd(loop(f'view(path="{SMALL}")')), repo.env(mode)),
            "0": (repo.run_cmd(loop('same(path="x")')), repo.env(mode))}
    server = repo.server_pid() if mode == "warm" else None
    timed = time_processes(cmds, runs, cwd=repo.repo, servers={key: server for key in cmds})
    return (timed["n"].wall_ms - timed["0"].wall_ms) * 1000 / calls


def mcp_call_us(repo: UserRepo, passes: int, calls: int) -> dict[str, float]:
    """µs per ``echo`` on an open session: a warm run timing rounds of ``calls`` calls with the sandbox's clock,
    and the official SDK client (benchmarks/mcp_clients.py) timing the same on the same server, taking turns
    (median of the passes: one after the other once each, a change of load moved the ratio by 0.1-0.9)."""
    program = (f"import time\n{ECHO}\nrounds = []\nfor r in range(3):\n    n = 0\n    t = time.perf_counter()\n"
               f"    for i in range({calls}):\n        n += len({ECHO})\n"
               f"    rounds.append((time.perf_counter() - t) / {calls} * 1e6)\n"
               f"    if n != {2 * calls}:\n        raise ValueError(n)\nprint(sorted(rounds)[1])")
    sdk = [str(repo.python), str(HERE / "mcp_clients.py"), "sdk", str(calls), "3", sys.executable, str(DEMO_SERVER)]
    samples: dict[str, list[float]] = {"warm": [], "sdk": []}
    for _ in range(passes):
        done = subprocess.run(repo.run_cmd(program), capture_output=True, text=True, env=repo.env("warm"),
                              cwd=repo.repo, stdin=subprocess.DEVNULL, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"the timed MCP run failed ({done.returncode}): {done.stderr[-800:]}")
        samples["warm"].append(float(done.stdout.strip().splitlines()[-1]))
        done = subprocess.run(sdk, capture_output=True, text=True, check=True, env=repo.env("cold"), cwd=repo.repo)
        samples["sdk"].append(json.loads(done.stdout)["per_call_us"])
    return {key: statistics.median(values) for key, values in samples.items()}


WARM_MS, COLD_MS, CALL_US, HOOK_MS, MCP_EXTRA_US = 50.0, 300.0, 100.0, 10.0, 2000.0
SEARCH_FACTOR, SEARCH_EXTRA_MS = 2.0, 100.0
TABLE_HEAD = ("| budget | measured | budget limit | verdict | agent-framework-monty | pydantic-ai-harness CodeMode | "
              "the seed's codeact.py |\n|---|---:|---:|---|---:|---:|---:|")


def make_tree(root: Path, files: int) -> None:
    """A deterministic source-like tree: folders of 50 files, TODOs and imports sprinkled in, a .gitignore."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    per_dir, subs = 50, 20
    for i in range(files):
        top, sub, n = i // (per_dir * subs), (i // per_dir) % subs, i % per_dir
        folder = root / f"pkg{top:03d}" / f"mod{sub:02d}"
        if n == 0:
            folder.mkdir(parents=True, exist_ok=True)
        ext = EXTS[i % len(EXTS)]
        lines = [f"# file {i}", "import os" if i % 3 == 0 else "import sys", ""]
        lines += [f"def function_{i}_{k}(value):" + ("  # TODO: tidy" if (i + k) % 37 == 0 else "")
                  + f"\n    return value * {k}" for k in range(8)]
        (folder / f"file{n:02d}{ext}").write_text("\n".join(lines) + "\n")
    (root / "pkg000" / "build").mkdir(exist_ok=True)
    (root / "pkg000" / "build" / "ignored.py").write_text("# TODO: ignored\n")


CASES = [  # name, program's call (its len() is printed), rg arguments
    ("grep TODO", f'grep(pattern="TODO", path="{TREE}", max_results=10**7)', ["--regexp", "TODO", TREE]),
    ("grep `import os` in *.py", f'grep(pattern="^import os", path="{TREE}", glob="*.py", max_results=10**7)',
     ["--glob", "*.py", "--regexp", "^import os", TREE]),
    ("grep -i, no match", f'grep(pattern="zebra_[0-9]+", path="{TREE}", ignore_case=True, max_results=10**7)',
     ["--ignore-case", "--regexp", "zebra_[0-9]+", TREE]),
    ("glob **/*.py", f'glob(pattern="**/*.py", path="{TREE}")', ["--files", "--glob", "*.py", TREE]),
]


def hook_ms(runs: int) -> tuple[str, float]:
    """The slowest hook scenario (median ms of ``runs`` spawns, registered entry) and its name."""
    cli_bash = ["/bin/bash", "--norc", "--noprofile", "-c"]
    with tempfile.TemporaryDirectory(prefix="bench-budget-hook-") as tmp:
        repo = bench_hook.make_repo(Path(tmp))
        (Path(tmp) / "state").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
        env.update(XDG_RUNTIME_DIR=str(Path(tmp) / "state"), LC_ALL="C.UTF-8")
        cases = {name: (cli_bash + [bench_hook.entries_for(name)["registered"]], stdin, {**env, "CODEACT_MODE": mode})
                 for name, (mode, stdin, _) in bench_hook.SCENARIOS.items() if "1 MB" not in name}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(runs + 2):
            for name, (argv, stdin, case_env) in cases.items():
                seconds = bench_hook.spawn_seconds(argv, stdin, repo, case_env)
                if i >= 2:
                    times[name].append(seconds * 1000)
    medians = {name: statistics.median(values) for name, values in times.items()}
    worst = max(medians, key=lambda name: medians[name])
    return worst, medians[worst]


def search(repo: UserRepo, files: int, runs: int) -> list[tuple[str, int, Timing, Timing]]:
    """Each bench_search case, warm, against rg: (case, results, codeact, rg); the counts are checked equal."""
    rg = shutil.which("rg", path=str(repo.python.parent)) or shutil.which("rg")
    if rg is None:
        raise SystemExit("ripgrep is not installed (the launcher's venv ships it on x86_64 and arm64)")
    make_tree(repo.repo / TREE, files)
    limits = LIMITS
    repo.start_server(limits)
    out = []
    try:
        for name, call, rg_args in CASES:
            cmds = {"codeact": (repo.run_cmd(f"print(len({call}))"), repo.env("warm", limits)),
                    "rg": ([rg, *rg_args], repo.env("cold"))}
            counts = {key: subprocess.run(cmd, cwd=repo.repo, env=env, capture_output=True, text=True,
                                          stdin=subprocess.DEVNULL).stdout for key, (cmd, env) in cmds.items()}
            found = {"codeact": int(counts["codeact"].strip()), "rg": len(counts["rg"].splitlines())}
            if found["codeact"] != found["rg"]:
                raise SystemExit(f"{name}: result counts differ: {found}")
            timed = time_processes(cmds, runs, cwd=repo.repo, ok_codes={"rg": (0, 1)},
                                   servers={"codeact": repo.server_pid(limits)})
            out.append((name, found["rg"], timed["codeact"], timed["rg"]))
    finally:
        repo.stop_server(limits)
    return out


def peer_figures(root: Path, calls: int, runs: int, seed: str | None) -> dict[str, tuple[Timing, float] | str]:
    """Per peer label: (its trivial run, µs per view call), or why it was not measured."""
    import peers

    root.mkdir(parents=True, exist_ok=True)
    small = root / "small.py"
    small.write_text("def f(x):\n    return x + 1\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "LANG": "C.UTF-8"}
    out: dict[str, tuple[Timing, float] | str] = {}
    for key, (label, _) in peers.PEERS.items():
        python = peers.ensure(key)
        if isinstance(python, str):
            out[label] = python
            continue
        start = time_processes({key: ([str(python), str(peers.HERE / "peer_run.py"), key, "trivial"], env)}, runs,
                               cwd=root, check_out={key: "1"})[key]
        out[label] = (start, peers.per_call(python, key, small, min(calls, 2000), max(3, runs))["view_us"])
    label = "the seed's codeact.py"
    if not seed or not Path(seed).expanduser().is_file():
        out[label] = "not measured: give its path with --seed or $CODEACT_BENCH_SEED (GitHub-only, not vendored)"
    else:
        python = peers.ensure("seed", peers.SEED_REQUIREMENT)
        if isinstance(python, str):
            out[label] = python
        else:
            start, call = peers.seed_figures(python, Path(seed).expanduser().resolve(), small, calls, runs)
            out[label] = (start, call["view_us"])
    return out


def _peer_cells(ours: float, peers: dict[str, tuple[Timing, float] | str], which: int) -> str:
    """codeact / peer for the trivial run (``which`` 0) or the view call (1), per peer, as table cells."""
    cells = []
    for figures in peers.values():
        if isinstance(figures, str):
            cells.append("n/a")
            continue
        theirs = figures[0].wall_ms if which == 0 else figures[1]
        cells.append(f"{ours / theirs:.2f}x ({theirs:.0f} {'ms' if which == 0 else 'µs'})")
    return " | ".join(cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=300_000, help="files in the grep/glob tree (default 300000)")
    parser.add_argument("--runs", type=int, default=7, help="runs per process measurement (median)")
    parser.add_argument("--calls", type=int, default=5000, help="view calls in the per-call programs")
    parser.add_argument("--quick", action="store_true", help="a small run (the smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="skip the peers")
    parser.add_argument("--seed", metavar="PATH", default=os.environ.get("CODEACT_BENCH_SEED") or None,
                        help="the seed's codeact.py (default: $CODEACT_BENCH_SEED)")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.runs, args.calls = 2000, 1, 300

    started = time.perf_counter()
    root = scratch("codeact-bench-budgets-")
    demo = {"type": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)]}
    try:
        repo = stamp_repo(root, mcp={"demo": demo})
        load_before = machine_load()
        if not repo.start_server():
            raise SystemExit("this runtime has no warm server: the warm budgets cannot be measured")
        try:
            start = time_processes({"cold": (repo.run_cmd("1"), repo.env("cold")),
                                    "warm": (repo.run_cmd("1"), repo.env("warm"))}, args.runs, cwd=repo.repo,
                                   check_out={"cold": "1", "warm": "1"}, servers={"warm": repo.server_pid()})
            calls = {mode: view_call_us(repo, args.runs, args.calls, mode) for mode in ("warm", "cold")}
            mcp = mcp_call_us(repo, max(1, args.runs // 2), max(30, args.calls // 20))
        finally:
            repo.stop_server()
        found = search(repo, args.files, max(1, args.runs // 2))
        hook_case, hook = hook_ms(max(20, args.runs * 10))
        load_after = machine_load()
        peers = {} if args.no_peers else peer_figures(root / "peers", args.calls, max(2, args.runs // 2), args.seed)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    rows: list[tuple[str, str, str, bool, str]] = []

    def add(name: str, measured: str, limit: str, met: bool, peer: str = "") -> None:
        rows.append((name, measured, limit, met, peer or " | ".join([none] * 3)))

    none = "no such feature" if peers else "not run (--no-peers)"

    trivial = {m: start[m].wall_ms for m in ("warm", "cold")}
    add("warm trivial run", f"{trivial['warm']:.1f} ms", f"{WARM_MS:g} ms", trivial["warm"] <= WARM_MS,
        _peer_cells(trivial["warm"], peers, 0) if peers else "")
    add("cold trivial run", f"{trivial['cold']:.1f} ms", f"{COLD_MS:g} ms", trivial["cold"] <= COLD_MS,
        _peer_cells(trivial["cold"], peers, 0) if peers else "")
    for mode in ("warm", "cold"):
        view = calls[mode]
        shown = f"{view:.1f} µs" if view > 0 else f"noise ({view:.1f} µs: rerun)"  # N calls ran faster than 0
        add(f"a tool call (`view`), {mode}", shown, f"{CALL_US:g} µs", view <= CALL_US,
            _peer_cells(view, peers, 1) if peers else "")
    add(f"the hook (slowest: {hook_case})", f"{hook:.2f} ms", f"{HOOK_MS:g} ms", hook <= HOOK_MS)
    limit_us = mcp["sdk"] + MCP_EXTRA_US
    add("an MCP call, warm (`echo`, open session)", f"{mcp['warm']:.0f} µs",
        f"{limit_us:.0f} µs (SDK client {mcp['sdk']:.0f} µs + 2 ms)", mcp["warm"] <= limit_us)
    for name, results, ours, rg in found:
        limit_ms = max(SEARCH_FACTOR * rg.wall_ms, rg.wall_ms + SEARCH_EXTRA_MS)
        add(f"{name}, {args.files:,} files, warm ({results:,} results)", f"{ours.wall_ms:.0f} ms",
            f"{limit_ms:.0f} ms (rg {rg.wall_ms:.0f} ms)", ours.wall_ms <= limit_ms)

    print(f"One run of `python benchmarks/bench_budgets.py{' --quick' if args.quick else ''}` "
          f"({time.perf_counter() - started:.0f} s): the stamped launcher in a stamped git repository, medians of "
          f"{args.runs} runs taking turns, wall time; {load_before} at the start, {load_after} at the end (a loaded "
          "machine stretches every figure). Peer cells: codeact / peer (the peer's own figure).\n")
    print(TABLE_HEAD)
    for name, measured, limit, met, peer in rows:
        print(f"| {name} | {measured} | <= {limit} | {'PASS' if met else 'FAIL'} | {peer} |")
    skipped = [f"- {label}: {why}" for label, why in peers.items() if isinstance(why, str)]
    if skipped:
        print("\n" + "\n".join(skipped))
    return 0 if all(met for *_, met, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
