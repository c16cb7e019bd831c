"""Stamping the workspace, one ``copilot -p`` session and its figures, and the always-on context."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import VENV_CACHE, git, snapshot_template
from tests.copilot.conftest import find_copilot, isolated_env
from tests.copilot.mock_model import MockModel, text

from .replay import LAUNCHER, Ctx, Estimator, Replay, compact, fixed_body, parse_cli_events, read_spills, usage_summary
from .task import BASELINES, DEMO_SERVER, restore
from .tasks import TODO_PROGRAM, Task
from .workspace import Layout, write_workspace


# ============================================================================================= the workspace
@dataclass
class Workspace:
    root: Path  # scratch folder
    repo: Path  # the stamped repository
    bare: Path  # the same repository before stamping (for the always-on cross-check)
    layout: Layout
    venv: Path
    copilot: str
    cache: Path
    mcp: bool
    setup_s: dict[str, float] = field(default_factory=dict)
    enforcement: str = "off"  # the stamped mode; baselines run with CODEACT_MODE=off and every server enabled
    servers: tuple[str, ...] = ()  # the MCP servers of the workspace's .mcp.json


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def launcher_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
    env["CODEACT_VENV"] = str(venv)
    return env


HANDSHAKE_SHIM = Path(__file__).with_name("handshake_shim.py")
PYTHON_SDK2_SERVERS = (str(DEMO_SERVER), "mcp-server-time")  # servers on the Python MCP SDK 2.x


def behind_shim(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A Python MCP SDK 2.x server's entry, run behind ``handshake_shim.py`` (why: its docstring); others as they
    are."""
    command = [str(entry.get("command", "")), *entry.get("args", [])]
    if not any(part.endswith(PYTHON_SDK2_SERVERS) for part in command):
        return dict(entry)
    return {**entry, "command": sys.executable, "args": [str(HANDSHAKE_SHIM), *command]}


def build_workspace(root: Path, *, seed: int, packages: int, mcp: bool = True, venv: Path = VENV_CACHE,
                    copilot: str | None = None, extra_servers: Mapping[str, Any] | None = None,
                    enforcement: str = "off") -> Workspace:
    """Generate, configure and stamp the benchmark repository under ``root``; prepare the launcher's venv.

    ``extra_servers``: more ``mcpServers`` entries for the workspace's ``.mcp.json`` (real servers, to measure a
    realistic context); ``enforcement``: the mode to stamp (``exclusive`` disables the servers in the CLI)."""
    from copier import run_copy

    if copilot is None:
        copilot, how = find_copilot()
        if copilot is None:
            raise SystemExit(f"bench: {how}")
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    template = snapshot_template(root / "template")
    repo = root / "acme"
    layout = write_workspace(repo, seed=seed, packages=packages)
    servers: dict[str, Any] = {}
    if mcp:
        servers = {"demo": {"type": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)]},
                   **(extra_servers or {})}
        servers = {name: behind_shim(entry) for name, entry in servers.items()}
        (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "acme platform")
    bare = root / "acme-bare"
    shutil.copytree(repo, bare, symlinks=True)
    times["generate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_copy(str(template), repo, data={"enforcement": enforcement}, defaults=True, unsafe=True, vcs_ref="HEAD",
             quiet=True, skip_tasks=True, overwrite=True)
    times["stamp_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    venv.mkdir(parents=True, exist_ok=True)
    _run([str(repo / LAUNCHER), "setup"], repo, launcher_env(venv))  # before any session: the CLI waits ~30 s
    times["launcher_setup_s"] = time.perf_counter() - t0
    if mcp:
        # what `copier copy`'s task does: discover the MCP servers into the lock and write their tools into the
        # instructions and agent (`refresh`); a template without `refresh` only has `discover`
        t0 = time.perf_counter()
        proc = subprocess.run([str(repo / LAUNCHER), "refresh"], cwd=repo, env=launcher_env(venv), capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        if proc.returncode == 2 and "invalid choice" in proc.stderr:
            _run([str(repo / LAUNCHER), "discover"], repo, launcher_env(venv), timeout=120)
        elif proc.returncode != 0:
            raise RuntimeError(f"codeact refresh failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        times["mcp_refresh_s"] = time.perf_counter() - t0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "codeact")
    cache = root / "copilot-cache"
    cache.mkdir(exist_ok=True)
    return Workspace(root, repo, bare, layout, venv, copilot, cache, mcp, times, enforcement, tuple(servers))


def warm_up(ws: Workspace) -> None:
    """Unpack the CLI into its cache and byte-compile the runtime once, so no measured session pays for it."""
    _run([str(ws.repo / LAUNCHER), "run", "--code", "1"], ws.repo, launcher_env(ws.venv))
    with MockModel([text("ok")]) as model:
        env = isolated_env(ws.root / "homes" / "warm-up", ws.cache, model.env())
        subprocess.run([ws.copilot, "-p", "hi", "--allow-all-tools", "--trust-folder", "--no-auto-update"],
                       cwd=ws.bare, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


# =============================================================================================== one session
@dataclass
class Session:
    task: str
    strategy: str
    requests: int
    tool_calls: int
    input_bytes: int
    fixed_bytes: int
    task_bytes: int
    peak_bytes: int
    input_tokens: int
    task_tokens: int
    wall_s: float
    answer_ok: bool
    request_bytes: list[int]
    tools_offered: int
    fixed_constant: bool
    cli_events: dict[str, Any]
    cli_usage: dict[str, Any]
    final_sha256: str
    program_bytes: int = 0
    discovery_turn: bool = False
    max_calls_per_turn: int = 0
    tool_turns: int = 0  # model replies that called tools: 2 or more is a chain (a call needed an earlier result)
    output_bytes: int = 0  # what the model generated: reply texts, tool-call names and arguments
    output_tokens: int = 0
    compactions: int = 0  # the CLI's own context-compaction requests (counted in requests and bytes)
    spills: int = 0  # tool results past the CLI's inline window, saved to a file and read back (charged)
    spill_calls: int = 0  # the tool calls that reading them back took (included in tool_calls)
    mcp_reruns: int = 0  # sessions run before this one and dropped: the CLI failed to connect an MCP server

    def row(self) -> dict[str, Any]:
        return self.__dict__.copy()


_counter = iter(range(1, 1_000_000))


CODEACT_STRATEGIES = ("codeact", "codeact-agent")


def valid_strategy(name: str) -> bool:
    return name in BASELINES or name in CODEACT_STRATEGIES


# CLI 1.0.102 opens an MCP connection with `server/discover` and, when that times out, retries with the legacy
# `initialize` on the same pipe. A server on the Python MCP SDK 2.x that read the discover (it answers it late when
# many servers start at once on a loaded machine) has locked the connection to the 2026-07-28 protocol and refuses
# that initialize (-32022): the CLI then runs the session without that server. Such a session is run again.
MCP_ATTEMPTS = 4


def mcp_connect_failures(home: Path) -> list[str]:
    """``SERVER: error`` for each MCP server the CLI failed to connect in the session with this home (its log)."""
    out = []
    for log in sorted((home / ".copilot" / "logs").glob("*.log")):
        for line in log.read_text("utf-8", errors="replace").splitlines():
            if "MCP server connection failed" not in line or "{" not in line:
                continue
            try:
                data = json.loads(line[line.index("{"):])
            except ValueError:
                data = {}
            out.append(f"{data.get('server_name', '?')}: {data.get('raw_error', line)}")
    return out


@dataclass
class _Run:
    proc: subprocess.CompletedProcess[str]
    wall: float
    home: Path
    ctx: Ctx
    replay: Replay
    requests: list[Any]
    replies: list[Any]
    errors: list[str]


def _run_once(ws: Workspace, task: Task, strategy: str, repo: Path, timeout: float) -> _Run:
    base = strategy in BASELINES
    ctx = Ctx(repo)
    agent = read_spills(task.baseline(strategy)(ctx) if base else task.codeact()(ctx), ctx)
    replay = Replay(agent, task.render, ctx)
    home = ws.root / "homes" / f"{next(_counter):03d}"  # one length: the path shows in the system prompt
    with MockModel(replay.script()) as model:
        env = isolated_env(home, ws.cache, {**model.env(), "CODEACT_VENV": str(ws.venv)})
        argv = [ws.copilot, "-p", task.prompt, "--allow-all-tools", "--trust-folder", "--no-auto-update",
                "--output-format", "json", "--usage-output-file", str(home / "usage.json")]
        if strategy == "codeact-agent":
            argv += ["--agent", "codeact"]
        if base and ws.enforcement != "off":
            # a baseline is the user without CodeAct: no hook, and every MCP server the stamp disabled back on
            env["CODEACT_MODE"] = "off"
            argv += [arg for name in ws.servers for arg in ("--enable-mcp-server", name)]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        return _Run(proc, wall, home, ctx, replay, list(model.requests), list(model.replies), list(model.errors))


def run_session(ws: Workspace, task: Task, strategy: str, est: Estimator, *, repo: Path | None = None,
                timeout: float = 600, dump: Path | None = None) -> tuple[Session, Replay]:
    """One ``copilot -p`` session of ``task`` with ``strategy``; the figures come from the recorded requests.

    A session in which the CLI failed to connect an MCP server is run again (``MCP_ATTEMPTS`` in all; the count
    is the session's ``mcp_reruns``); if every attempt fails, this raises with the CLI's errors.
    ``dump``: a folder to write what the model received into (``TASK.STRATEGY.json``: each request's messages)."""
    repo = repo or ws.repo
    base = strategy in BASELINES
    where = f"{task.name}/{strategy}"
    for attempt in range(MCP_ATTEMPTS):
        run = _run_once(ws, task, strategy, repo, timeout)
        if not (failed := mcp_connect_failures(run.home)):
            break
        print(f"bench: {where}: the CLI failed to connect {'; '.join(failed)}: run again", file=sys.stderr,
              flush=True)
        if task.check is not None:
            restore(repo)
    else:
        raise RuntimeError(f"{where}: in each of {MCP_ATTEMPTS} sessions the CLI failed to connect an MCP server; "
                           f"the last: {'; '.join(failed)}")
    proc, wall, home, ctx, replay = run.proc, run.wall, run.home, run.ctx, run.replay
    requests, replies, errors = run.requests, run.replies, run.errors
    if proc.returncode != 0 or errors or replay.final_text is None:
        raise RuntimeError(f"{where}: copilot exited {proc.returncode}; mock errors: {errors}\n"
                           f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
    sizes, fixed, tokens, fixed_tokens = [], [], [], []
    for r in requests:
        if compact(r.body) != r.raw:
            raise RuntimeError(f"{where}: a request body is not compact JSON; the byte accounting would be wrong")
        f = fixed_body(r.body)
        sizes.append(r.size)
        fixed.append(len(compact(f)))
        tokens.append(est.body(r.body))
        fixed_tokens.append(est.body(f))
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{task.name}.{strategy}.json").write_text(json.dumps(
            [{"bytes": size, "fixed_bytes": f, "messages": r.body.get("messages")}
             for size, f, r in zip(sizes, fixed, requests)], indent=1, ensure_ascii=False) + "\n")
    events = parse_cli_events(proc.stdout)
    tool_calls = sum(len(m.get("tool_calls") or []) for m in replies)
    if events["tool_calls"] != tool_calls or events["model_calls"] not in (len(requests),
                                                                          len(requests) - replay.compactions):
        raise RuntimeError(f"{where}: the CLI reports {events['model_calls']} model calls and {events['tool_calls']} "
                           f"tool calls; the mock saw {len(requests)} requests and {tool_calls} calls")
    return Session(
        task=task.name, strategy=strategy, requests=len(requests), tool_calls=tool_calls, input_bytes=sum(sizes),
        fixed_bytes=fixed[0], task_bytes=sum(s - f for s, f in zip(sizes, fixed)), peak_bytes=max(sizes),
        input_tokens=sum(tokens), task_tokens=sum(t - f for t, f in zip(tokens, fixed_tokens)), wall_s=wall,
        answer_ok=False, request_bytes=sizes, tools_offered=len(requests[0].tools),
        fixed_constant=len(set(fixed)) == 1,
        cli_events={k: v for k, v in events.items() if k != "final"} | {"final_matches": events["final"] ==
                                                                         replay.final_text},
        cli_usage=usage_summary(home / "usage.json"),
        final_sha256=hashlib.sha256(replay.final_text.encode()).hexdigest(),
        program_bytes=0 if base else len(task.program.strip().encode()),
        max_calls_per_turn=max(len(m.get("tool_calls") or []) for m in replies),
        tool_turns=sum(1 for m in replies if m.get("tool_calls")),
        output_bytes=sum(est.reply(m)[0] for m in replies), output_tokens=sum(est.reply(m)[1] for m in replies),
        discovery_turn=ctx.discovery, compactions=replay.compactions, spills=ctx.spills, spill_calls=ctx.spill_calls,
        mcp_reruns=attempt,
    ), replay


def run_pair(ws: Workspace, task: Task, strategies: Sequence[str], est: Estimator, truth: Any,
             dump: Path | None = None) -> list[Session]:
    """Run ``task`` with each strategy; assert every answer equals ``truth`` (and, for a task that edits files,
    that the workspace holds exactly those edits; it is restored after each session)."""
    out: list[Session] = []
    expected = task.render(truth)
    for strategy in strategies:
        try:
            session, replay = run_session(ws, task, strategy, est, dump=dump)
            if task.check is not None:
                task.check(ws.repo, truth)
        finally:
            if task.check is not None:
                restore(ws.repo)
        if replay.answer != truth or replay.final_text != expected:
            raise AssertionError(f"{task.name}/{strategy}: the answer differs from the ground truth\n"
                                 f"got:      {str(replay.answer)[:1500]}\nexpected: {str(truth)[:1500]}")
        if not session.cli_events["final_matches"]:
            raise AssertionError(f"{task.name}/{strategy}: the CLI's final message is not the scripted answer")
        session.answer_ok = True
        out.append(session)
    return out


# ============================================================================= always-on context vs MCP schemas
def _frontmatter(path: Path) -> dict[str, str]:
    import yaml

    text_ = path.read_text("utf-8")
    if not text_.startswith("---"):
        return {}
    return yaml.safe_load(text_.split("---", 2)[1]) or {}


def always_on(repo: Path) -> dict[str, Any]:
    """What this project adds to EVERY request, from the stamped files (no CLI): the ``applyTo: "**"`` instruction
    files (inlined verbatim), the skills' names and descriptions (listed in ``<available_skills>``) and the codeact
    agent's name and description (listed for the ``task`` tool)."""
    parts: dict[str, int] = {}
    for p in sorted((repo / ".github" / "instructions").glob("*.instructions.md")):
        if _frontmatter(p).get("applyTo", "**") == "**":
            parts[str(p.relative_to(repo))] = p.stat().st_size
    for p in sorted((repo / ".github" / "skills").glob("*/SKILL.md")):
        fm = _frontmatter(p)
        parts[f"skill {fm.get('name')} (name + description)"] = len(f"{fm.get('name')}{fm.get('description')}".encode())
    for p in sorted((repo / ".github" / "agents").glob("*.agent.md")):
        fm = _frontmatter(p)
        parts[f"agent {fm.get('name')} (name + description)"] = len(f"{fm.get('name')}{fm.get('description')}".encode())
    return {"parts": parts, "bytes": sum(parts.values())}


def mcp_schema_bytes() -> dict[str, Any]:
    """The test MCP servers' tool schemas as the CLI offers them to the model (one ``{"type": "function", ...}``
    per tool, named ``server-tool``), listed through the MCP SDK: what a session carries per request when the
    servers are configured for the CLI, and what the codeact agent (only bash) does not carry."""
    servers = {"demo": [sys.executable, str(DEMO_SERVER)],
               "time": [sys.executable, "-m", "mcp_server_time", "--local-timezone=UTC"]}

    async def listing(command: list[str]) -> list[Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        with open(os.devnull, "w") as devnull:
            async with stdio_client(StdioServerParameters(command=command[0], args=command[1:]),
                                    errlog=devnull) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return list((await session.list_tools()).tools)

    out: dict[str, Any] = {}
    for name, command in servers.items():
        try:
            tools = asyncio.run(listing(command))
        except Exception as exc:  # noqa: BLE001 - report, do not fail the benchmark
            out[name] = {"error": repr(exc)}
            continue
        fns = [{"type": "function", "function": {"name": f"{name}-{t.name}", "description": t.description or "",
                                                 "parameters": t.input_schema}} for t in tools]
        out[name] = {"tools": len(fns), "bytes": sum(len(compact(f)) for f in fns)}
    out["bytes"] = sum(v.get("bytes", 0) for v in out.values() if isinstance(v, dict))
    return out


TODO_AS_EXPRESSION = r'''
hits = grep(pattern=r"#.*\bTODO\b", path="src", glob="*.py") + grep(pattern=r"#.*\bTODO\b", path="tests", glob="*.py")
{"total": len(hits), "todos": [[h["path"], h["line"]] for h in hits]}
'''


def output_formats(ws: Workspace) -> dict[str, Any]:
    """The TODO answer as the program prints it, three ways (launcher only, no CLI): compact lines printed by the
    program (the benchmark's program); the same data as the program's last expression — the form of the
    instructions' example — which the runtime prints as one line of JSON; and that JSON without the spaces after
    ``,`` and ``:``."""
    def run(program: str) -> str:
        return subprocess.run([str(ws.repo / LAUNCHER), "run", "-"], cwd=ws.repo, env=launcher_env(ws.venv),
                              input=program, capture_output=True, text=True, timeout=120, check=True).stdout

    printed = run(TODO_PROGRAM)
    pretty = run(TODO_AS_EXPRESSION)
    one_line = json.dumps(json.loads(pretty), separators=(",", ":"), ensure_ascii=False) + "\n"
    return {"task": "todo", "printed_lines": len(printed.encode()), "last_expression": len(pretty.encode()),
            "last_expression_no_spaces": len(one_line.encode())}


def fixed_prefix_session(ws: Workspace, repo: Path, agent: str | None = None,
                         extra_args: Sequence[str] = ()) -> tuple[int, list[str], dict[str, Any]]:
    """The fixed prefix of a one-request session in ``repo`` (the model answers at once); run again, as
    ``run_session`` does, while the CLI fails to connect an MCP server."""
    failed: list[str] = []
    for _attempt in range(MCP_ATTEMPTS):
        home = ws.root / "homes" / f"{next(_counter):03d}"
        with MockModel([text("ok")]) as model:
            env = isolated_env(home, ws.cache, model.env())
            argv = [ws.copilot, "-p", "hi", "--allow-all-tools", "--trust-folder", "--no-auto-update", *extra_args]
            if agent:
                argv += ["--agent", agent]
            subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
            req = model.requests[0]
        if not (failed := mcp_connect_failures(home)):
            return len(compact(fixed_body(req.body))), req.tool_names, req.body
        print(f"bench: fixed prefix in {repo.name}: the CLI failed to connect {'; '.join(failed)}: run again",
              file=sys.stderr, flush=True)
    raise RuntimeError(f"fixed prefix in {repo}: in each of {MCP_ATTEMPTS} sessions the CLI failed to connect an "
                       f"MCP server; the last: {'; '.join(failed)}")
