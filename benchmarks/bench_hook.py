"""Latency of the hooks (preToolUse; sessionStart and postToolUse), whole process, against `bash -c 'exit 0'`.

The hook runs before EVERY tool call of the Copilot CLI, so its cost is paid per call. Each scenario spawns what the
CLI spawns for a hook's `bash` entry (`/bin/bash --norc --noprofile -c ENTRY`, cwd = the repository, the payload on
stdin) and the baseline spawns the same with `exit 0`; runs are interleaved (baseline, then every scenario, repeated)
and the table shows medians. The budget is 10 ms a call (bench_budgets.py measures it with the slowest scenario).

    python benchmarks/bench_hook.py [--runs 200] [--json results.json]

Two entries are measured: the one the repo-scope hooks file (template/{{ hooks_file }}.jinja) registers, and the
sourced form `. .codeact/hooks/pre-tool-use.sh`, which saves the process(es) the shebang costs. The exit status is 1
when the registered entry misses the budget. The hook is rendered from the enforcement spec
(codeact.enforcement.render.hook_template, as the stamp does) with Jinja (it depends on a few answers only:
enforcement, tools, the scope and its launcher command and hook path) into a temporary repository, with session-start.sh and post-tool-use.sh beside it (issue 13:
the same budget; postToolUse runs after every call, sessionStart once per session).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from codeact.enforcement import render  # noqa: E402 - the runtime of this checkout, put on the path above

ROOT = Path(__file__).resolve().parents[1]
# The scripts of the other events, by the event the hooks file registers them for.
EVENT_SCRIPTS = {"preToolUse": "pre-tool-use", "postToolUse": "post-tool-use", "sessionStart": "session-start"}
HOOKS_FILE = ROOT / "template/{{ hooks_file }}.jinja"
HOOK = ".codeact/hooks/pre-tool-use.sh"
MODES = ("off", "nudge", "exclusive")
BUDGET_MS = 10.0  # per hook call
LAUNCHER = ".codeact/bin/codeact"
PROGRAM = 'for p in glob(pattern="src/**/*.py"):\n    print(p, len(view(path=p)))\n' * 3


def payload(tool: str, args: dict[str, object], session: str = "bench-session") -> bytes:
    return json.dumps({"sessionId": session, "timestamp": 1795988347236, "cwd": "/repo", "toolName": tool,
                       "toolArgs": args}).encode()


# name: (mode, payload, what it exercises)
SCENARIOS: dict[str, tuple[str, bytes, str]] = {
    "off, view": ("off", payload("view", {"path": "README.md"}), "reads stdin, exits"),
    "nudge, view (4th denied)": ("nudge", payload("view", {"path": "README.md"}),
                                 "counter file: read, append or reset; every 4th call prints a deny"),
    "nudge, bash": ("nudge", payload("bash", {"command": "ls", "description": "list"}), "resets the run"),
    "exclusive, view (denied)": ("exclusive", payload("view", {"path": "README.md"}), "denies with the reason"),
    "exclusive, launcher heredoc": ("exclusive", payload("bash", {
        "command": f"{LAUNCHER} run - <<'PY'\n{PROGRAM}PY", "description": "run"}), "parses the command line"),
    "exclusive, chained command": ("exclusive", payload("bash", {
        "command": f"cd /tmp && {LAUNCHER} run --code 'print(1)'", "description": "run"}), "denies the chain"),
    "exclusive, --workspace path": ("exclusive", payload("bash", {
        "command": f"{LAUNCHER} run --workspace src --code 'print(1)'", "description": "run"}), "resolves a path"),
    "off, 1 MB create": ("off", payload("create", {"path": "big.txt", "file_text": "x" * 1_000_000}),
                         "reads 1 MB of stdin (not held to the budget)"),
}
POST_VIEW = json.dumps({"sessionId": "bench-session", "timestamp": 1795988347236, "cwd": "/repo", "toolName": "view",
                        "toolArgs": {"path": "README.md"},
                        "toolResult": {"resultType": "success", "textResultForLlm": "# demo\n" * 200}}).encode()
START = json.dumps({"sessionId": "bench-session", "timestamp": 1795988347236, "cwd": "/repo", "source": "new",
                    "initialPrompt": "List the TODOs."}).encode()
# scenario name: (event, mode, payload, what it exercises)
EVENT_SCENARIOS: dict[str, tuple[str, str, bytes, str]] = {
    "off, postToolUse view": ("postToolUse", "off", POST_VIEW, "reads stdin, exits"),
    "nudge, postToolUse view": ("postToolUse", "nudge", POST_VIEW, "finds the tool, reads the counter"),
    "exclusive, postToolUse view": ("postToolUse", "exclusive", POST_VIEW, "reads stdin, exits"),
    "off, sessionStart": ("sessionStart", "off", START, "reads stdin, exits"),
    "nudge, sessionStart": ("sessionStart", "nudge", START, "prints the mode note, looks for the venv"),
}
for _name, (_event, _mode, _stdin, _what) in EVENT_SCENARIOS.items():
    SCENARIOS[_name] = (_mode, _stdin, _what)


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    (repo / HOOK).parent.mkdir(parents=True)
    for name in EVENT_SCRIPTS.values():
        template = render.hook_template(f"{name}.sh")
        text = jinja2.Environment(keep_trailing_newline=True).from_string(template).render(
            enforcement="off", launcher_command=LAUNCHER, scope="repo", hook_script=HOOK,
            tools=["view", "create", "edit", "glob", "grep", "bash", "sql"], hooks_file=".github/hooks/codeact.json")
        hook = repo / ".codeact/hooks" / f"{name}.sh"
        hook.write_text(text)
        hook.chmod(0o755)
    (repo / LAUNCHER).parent.mkdir(parents=True)
    (repo / LAUNCHER).write_text("#!/bin/sh\n")
    (repo / "src").mkdir()
    return repo


def spawn_seconds(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode()[:300]}")
    return elapsed


def registered_entry(event: str = "preToolUse") -> str:
    config = json.loads(jinja2.Environment().from_string(HOOKS_FILE.read_text()).render(scope="repo"))
    return str(config["hooks"][event][0]["bash"])


def entries_for(scenario: str) -> dict[str, str]:
    """The registered and the sourced entry of the hook a scenario runs."""
    event = EVENT_SCENARIOS[scenario][0] if scenario in EVENT_SCENARIOS else "preToolUse"
    return {"registered": registered_entry(event), "sourced": f". .codeact/hooks/{EVENT_SCRIPTS[event]}.sh"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="spawns per scenario and entry (default 200)")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()

    # What the Copilot CLI (1.0.102) spawns for a hook's `bash` entry, seen with a probe hook.
    cli_bash = ["/bin/bash", "--norc", "--noprofile", "-c"]
    entries = {"registered": registered_entry(), "sourced": f". {HOOK}"}
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        base = Path(tmp)
        repo = make_repo(base)
        (base / "state").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
        env.update(XDG_RUNTIME_DIR=str(base / "state"), LC_ALL="C.UTF-8")
        envs = {mode: {**env, "CODEACT_MODE": mode} for mode in MODES}
        runs = [("baseline", "", cli_bash + ["exit 0"], SCENARIOS["off, view"][1], env)]
        for name, (mode, stdin, _) in SCENARIOS.items():
            for entry, command in entries_for(name).items():
                runs.append((name, entry, cli_bash + [command], stdin, envs[mode]))
        times: dict[tuple[str, str], list[float]] = {(name, entry): [] for name, entry, *_ in runs}
        for _ in range(5):  # warm the page cache
            for name, entry, argv, stdin, run_env in runs:
                spawn_seconds(argv, stdin, repo, run_env)
        for _ in range(args.runs):
            for name, entry, argv, stdin, run_env in runs:
                times[(name, entry)].append(spawn_seconds(argv, stdin, repo, run_env))

    base_ms = statistics.median(times[("baseline", "")]) * 1000
    rows = []
    for name, (mode, _, what) in SCENARIOS.items():
        budget = None if "1 MB" in name else BUDGET_MS
        row: dict[str, object] = {"scenario": name, "mode": mode, "budget_ms": budget, "what": what}
        for entry in entries:
            ms = statistics.median(times[(name, entry)]) * 1000
            row[entry] = {"median_ms": round(ms, 3), "ratio": round(ms / base_ms, 2),
                          "ok": None if budget is None else ms <= budget}
        rows.append(row)

    bash_version = subprocess.run(cli_bash + ["echo $BASH_VERSION"], capture_output=True, text=True).stdout.strip()
    print(f"Hook latency, whole process, median of {args.runs} interleaved runs; bash {bash_version}, "
          f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs.")
    print(f"registered = the template's entry (preToolUse: `{entries['registered']}`; the other events likewise); "
          f"sourced = `{entries['sourced']}`; each run "
          f"as the CLI runs it: `{' '.join(cli_bash)} ENTRY`.\n")
    print("| scenario | registered | ratio | sourced | ratio | budget |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| baseline `bash -c 'exit 0'` | {base_ms:.2f} ms | 1.00x | | | |")

    def cell(result: dict[str, object]) -> str:
        flag = "" if result["ok"] in (None, True) else " **over**"
        return f"{result['median_ms']:.2f} ms | {result['ratio']:.2f}x{flag}"

    for row in rows:
        shown = f"<= {row['budget_ms']:g} ms" if row["budget_ms"] else "-"
        print(f"| {row['scenario']} | {cell(row['registered'])} | {cell(row['sourced'])} | {shown} |")  # type: ignore
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "baseline_ms": round(base_ms, 3), "entries": entries,
                                         "rows": rows, "bash": bash_version, "platform": platform.platform(),
                                         "cpus": os.cpu_count()}, indent=2) + "\n")
    return 0 if all(r["registered"]["ok"] is not False for r in rows) else 1  # type: ignore[index]


if __name__ == "__main__":
    raise SystemExit(main())
