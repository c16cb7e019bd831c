#!/usr/bin/env python3
"""CodeAct against the Copilot CLI's own tools, measured through the REAL Copilot CLI (scripted replay).

    python benchmarks/bench_codeact_vs_baseline.py                 # every task; writes benchmarks/results/
    python benchmarks/bench_codeact_vs_baseline.py --tasks todo,json --keep /tmp/bench
    python benchmarks/bench_codeact_vs_baseline.py --live [--model NAME]   # opt-in: a real model, your Copilot login

What it does (see benchmarks/README.md for the method and the figures):

1. Generates a realistic monorepo from a seed (bench_workspace.py), configures the test MCP server
   (tests/mcp/servers/demo_server.py) in its ``.mcp.json``, stamps CodeAct into it with the real ``copier`` (this
   working tree as the template; default tools, enforcement off), prepares the launcher's venv and runs
   ``codeact discover``.
2. Computes each task's ground truth straight from the files (``ast``, ``tokenize``, ``json``, and the MCP server
   called directly through the SDK).
3. Runs every task with each strategy as ONE session of the real Copilot CLI (``copilot -p``, offline), the model
   being ``tests/copilot/mock_model.py``. The model's moves are scripted, but each answer is computed from the tool
   results the model received in that session, and must equal the ground truth:
   - ``baseline``: the CLI's own tools (grep, glob, view, the MCP tools the CLI exposes), every set of independent
     calls issued in ONE turn (parallel tool calls; ``--max-parallel`` caps a turn);
   - ``codeact``: one ``bash`` call of ``.codeact/bin/codeact run - <<'PY' ... PY``, same session set-up;
   - ``codeact-agent``: the same program, with ``--agent codeact`` (whose only tool is bash).
4. Takes the figures from what the model received (every request body) and writes
   ``benchmarks/results/codeact_vs_baseline.json`` (raw) and ``.md`` (the table, labelled "scripted replay").

``--live`` runs the same prompts with a real model instead (needs a logged-in Copilot CLI and network); it reports
whether the model chose CodeAct where the instructions say it should, and the CLI's own usage figures.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Sequence

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
for _p in (str(REPO_ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from bench_workspace import Layout, write_workspace  # noqa: E402
from tests.conftest import VENV_CACHE, git, snapshot_template  # noqa: E402
from tests.copilot.conftest import COPILOT_VERSION, find_copilot, isolated_env  # noqa: E402
from tests.copilot.mock_model import ChatRequest, MockModel, Text, ToolCall, ToolResult, text  # noqa: E402

DEMO_SERVER = REPO_ROOT / "tests" / "mcp" / "servers" / "demo_server.py"
RESULTS = HERE / "results"
LABEL = "scripted replay"
LAUNCHER = ".codeact/bin/codeact"
STRATEGIES = ("baseline", "codeact", "codeact-agent", "baseline@16")  # baseline@N: at most N parallel calls a turn
SENSITIVITY_CAP = 16
TARGET_TASK_BYTES = 0.10  # CODEACT task bytes <= 10% of BASELINE on every multi-step task
TARGET_REQUESTS = 0.50  # CODEACT model requests <= 50% of BASELINE


# ================================================================================================ token estimate
class Estimator:
    """Token estimate of a request: OpenAI's o200k_base BPE (``bpe-openai``, which bundles its vocabulary and works
    offline) over what a chat template would render — each message's text, each tool call's name and arguments,
    3 tokens per message (the OpenAI cookbook's per-message overhead) and the compact JSON of the tool schemas.
    Without ``bpe-openai`` the same texts are counted as UTF-8 bytes / 4, and the name says so."""

    def __init__(self) -> None:
        try:
            import bpe_openai  # type: ignore[import-not-found]

            enc = bpe_openai.get_encoding("o200k_base")
            self.name = f"o200k_base (bpe-openai {getattr(bpe_openai, '__version__', '?')})"
            self._count = lambda s: len(enc.encode(s))
        except Exception:  # noqa: BLE001 - any failure means: no tokenizer here
            self.name = "UTF-8 bytes / 4 (bpe-openai not installed)"
            self._count = lambda s: (len(s.encode()) + 3) // 4
        self._cache: dict[str, int] = {}

    def count(self, s: str) -> int:
        if not s:
            return 0
        n = self._cache.get(s)
        if n is None:
            n = self._cache[s] = self._count(s)
        return n

    def body(self, body: dict[str, Any]) -> int:
        total = self.count(json.dumps(body.get("tools") or [], separators=(",", ":"), ensure_ascii=False))
        for m in body.get("messages") or []:
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
            total += 3 + self.count(m.get("role") or "") + self.count(content or "")
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                total += self.count(fn.get("name") or "") + self.count(fn.get("arguments") or "")
        return total


def compact(obj: Any) -> bytes:
    """JSON as the CLI sends it (JSON.stringify: no spaces, UTF-8 kept) — checked against every recorded body."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def fixed_body(body: dict[str, Any]) -> dict[str, Any]:
    """The part of a request every request of its session carries, whatever the task: the request with its
    conversation removed — the system message(s) before the first user message stay, and so do the tool schemas
    and the sampling settings."""
    messages = body.get("messages") or []
    k = 0
    while k < len(messages) and messages[k].get("role") == "system":
        k += 1
    return {**body, "messages": messages[:k]}


# ============================================================================================ CLI tool results
class Incomplete(RuntimeError):
    """A tool result the CLI cut: the scripted model refuses to answer from it."""


_GREP_HEAD = re.compile(r"^\[grep content: (\d+) match(?:es|\(es\))? across (\d+) file\(s\)(?: under (.+?))?\]$")
_GREP_INLINE = re.compile(r"^(.+?):(\d+): ?(.*)$")
_GREP_GROUP = re.compile(r"^(.+) \((\d+) match\(es\)\):$")
_GREP_GROUPED_LINE = re.compile(r"^  (\d+): ?(.*)$")


def parse_grep(content: str) -> list[tuple[str, int, str]]:
    """The CLI's ``grep`` content-mode output (-n) as (path, line, text), sorted; paths repo-relative.

    1.0.102 prints a short result as plain ``path:LINE:text`` lines. A longer one starts with
    ``[grep content: N matches across M file(s)( under DIR)]``, then shows a file with one match as
    ``path:LINE: text`` and a file with several as ``path (K match(es)):`` followed by ``  LINE: text`` lines; paths
    are relative to DIR when it is given; a cut result ends with ``[omitted ...]``."""
    lines = content.split("\n")
    if lines and lines[0].strip() == "No matches found.":
        return []
    head = _GREP_HEAD.match(lines[0]) if lines else None
    if head is None:  # a short result: plain ``path:LINE:text`` lines, no header
        hits = []
        for line in lines:
            m = _GREP_INLINE.match(line)
            if m is None:
                if line.strip():
                    raise ValueError(f"not a grep content result: {content[:200]!r}")
                continue
            hits.append((m.group(1), int(m.group(2)), m.group(3)))
        return sorted(hits)
    if any(line.startswith("[omitted ") for line in lines):
        raise Incomplete("the CLI cut this grep result ([omitted ...]); narrow the search")
    prefix = (head.group(3).rstrip("/") + "/") if head.group(3) else ""
    hits: list[tuple[str, int, str]] = []
    group: str | None = None
    for line in lines[1:]:
        if not line.strip():
            group = None
            continue
        g = _GREP_GROUP.match(line)
        if g:
            group = g.group(1)
            continue
        if group is not None:
            m = _GREP_GROUPED_LINE.match(line)
            if m:
                hits.append((prefix + group, int(m.group(1)), m.group(2)))
                continue
            group = None
        m = _GREP_INLINE.match(line)
        if m is None:
            raise ValueError(f"unexpected grep line: {line!r}")
        hits.append((prefix + m.group(1), int(m.group(2)), m.group(3)))
    if len(hits) != int(head.group(1)):
        raise Incomplete(f"grep announced {head.group(1)} matches, {len(hits)} were listed")
    return sorted(hits)


_GLOB_HEAD = re.compile(r"^\[glob: (\d+) path\(s\) under (.+?); grouped by directory\]$")
_GLOB_DIR = re.compile(r"^(.+/) \((\d+) path\(s\)\)$")


def parse_glob(content: str) -> list[str]:
    """The CLI's ``glob`` output -> sorted repo-relative paths.

    1.0.102 prints a short result as one ``./path`` per line (unsorted); a long one (190 paths here) as
    ``[glob: N path(s) under DIR; grouped by directory]``, then per folder ``./dir/ (K path(s))`` and its names
    indented by two spaces, then ``[extensions: ...]``."""
    def rel(p: str) -> str:
        return p[2:] if p.startswith("./") else p

    lines = content.splitlines()
    if not lines or lines[0].strip().startswith("No files"):
        return []
    head = _GLOB_HEAD.match(lines[0])
    if head is None:
        return sorted(rel(ln.strip()) for ln in lines if ln.strip())
    out: list[str] = []
    folder = None
    for line in lines[1:]:
        d = _GLOB_DIR.match(line)
        if d:
            folder = rel(d.group(1))
        elif line.startswith("  ") and folder is not None:
            out.append(folder + line.strip())
        elif line.startswith("[") or not line.strip():
            folder = None if not line.strip() else folder
        else:
            raise ValueError(f"unexpected glob line: {line!r}")
    if len(out) != int(head.group(1)):
        raise Incomplete(f"glob announced {head.group(1)} paths, {len(out)} were listed")
    return sorted(out)


_SHELL_TAIL = re.compile(r"\n?<shellId: \S+ completed with exit code (-?\d+)>\s*$")


def bash_output(content: str) -> str:
    """The output of a finished ``bash`` call, without the CLI's ``<shellId: N completed ...>`` line."""
    m = _SHELL_TAIL.search(content)
    if m is None:
        raise Incomplete(f"the bash call did not complete: {content[-300:]!r}")
    if m.group(1) != "0":
        raise RuntimeError(f"the program failed (exit {m.group(1)}):\n{content[:2000]}")
    return content[:m.start()]


def mcp_value(content: str) -> Any:
    """An MCP tool result as the CLI shows it (the text content, then the structured content as compact JSON)."""
    last = [p for p in content.strip().split("\n\n") if p.strip()][-1]
    value = json.loads(last)
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]  # the SDK wraps a primitive result as {"result": ...}
    return value


# ================================================================================================ the replay
Agent = Generator[Any, list[ToolResult], Any]


class Replay:
    """A strategy, written as a generator, played as the mock model's script.

    The generator yields a turn (one ``ToolCall`` or a list of them: parallel tool calls) and is resumed with that
    turn's tool results — taken from the request the CLI sent next, i.e. what the model received — in call order;
    it returns the answer, computed from those results. Every request of the session resumes it once — except the
    CLI's own context-compaction requests (sent in the background, concurrently, once a session's context grows
    past the CLI's threshold), which get a short summary and leave the strategy where it is."""

    def __init__(self, agent: Agent, render: Callable[[Any], str], ctx: "Ctx | None" = None) -> None:
        self.agent, self.render, self.ctx = agent, render, ctx
        self.lock = threading.Lock()
        self.compactions = 0
        self.started = False
        self.answer: Any = None
        self.final_text: str | None = None
        self._ids = 0
        self._pending: list[str] = []

    def _number(self, turn: Any) -> list[ToolCall]:
        calls = [turn] if isinstance(turn, ToolCall) else list(turn)
        out = []
        for c in calls:
            self._ids += 1
            out.append(ToolCall(c.name, c.arguments, id=f"call_{self._ids}"))
        self._pending = [c.id for c in out]  # type: ignore[misc]
        return out

    def __call__(self, request: ChatRequest) -> Any:
        if is_compaction(request):
            with self.lock:
                self.compactions += 1
            return text(COMPACTION_SUMMARY)
        with self.lock:
            return self._step(request)

    def _step(self, request: ChatRequest) -> Any:
        try:
            if not self.started:
                self.started = True
                if self.ctx is not None:
                    self.ctx.system = request.system
                turn = next(self.agent)
            else:
                by_id = {r.call_id: r for r in request.tool_results()}
                missing = [i for i in self._pending if i not in by_id]
                if missing:
                    raise Incomplete(f"no tool result for {missing}")
                turn = self.agent.send([by_id[i] for i in self._pending])
        except StopIteration as stop:
            self.answer = stop.value
            self.final_text = self.render(stop.value)
            return text(self.final_text)
        return self._number(turn)

    def script(self, turns: int = 64) -> list[Any]:
        return [self] * turns


COMPACTION_PROMPT = "Please create a detailed summary of the conversation so far"
COMPACTION_SUMMARY = ("<overview>The user asked for a repository analysis; I am gathering the files with the CLI's "
                      "tools and computing the answer from their contents.</overview>\n<history>Listed the files, "
                      "read them in batches, kept the per-file results.</history>\n<work_done>Nothing modified."
                      "</work_done>\n<next_steps>Finish reading, then answer.</next_steps>\n"
                      "<checkpoint_title>Repository analysis</checkpoint_title>")


def is_compaction(request: ChatRequest) -> bool:
    """The CLI's compaction request: the conversation so far plus a user message asking for a summary."""
    last = request.messages[-1] if request.messages else {}
    return last.get("role") == "user" and COMPACTION_PROMPT in str(last.get("content"))


def tc(tool: str, /, **arguments: Any) -> ToolCall:
    return ToolCall(tool, arguments)


def parallel(calls: Sequence[ToolCall], limit: int | None) -> Generator[Any, list[ToolResult], list[ToolResult]]:
    """Issue independent ``calls`` as parallel tool calls, ``limit`` per turn (None: all in one turn)."""
    results: list[ToolResult] = []
    step = limit or max(len(calls), 1)
    for i in range(0, len(calls), step):
        results += yield list(calls[i:i + step])
    return results


def heredoc(program: str) -> str:
    return f"{LAUNCHER} run - <<'PY'\n{program.strip()}\nPY"


def codeact_agent(program: str, parse: Callable[[str], Any], needs: Sequence[str] = ()) -> Callable[["Ctx"], Agent]:
    """One bash call of the launcher with ``program``. ``needs``: sandbox tools the program calls that the model
    must have been told about; when the system prompt it received does not name them (MCP tools are not listed in
    the stamped instructions), the model first lists the sandbox's tools with ``codeact tools`` — one more turn."""
    def agent(ctx: "Ctx") -> Agent:
        unknown = [n for n in needs if n not in ctx.system]
        if unknown:
            ctx.discovery = True
            listing = yield tc("bash", command=f"{LAUNCHER} tools", description="List the CodeAct sandbox tools")
            shown = bash_output(listing[0].content)
            if missing := [n for n in unknown if f"{n}(" not in shown]:
                raise RuntimeError(f"`codeact tools` does not list {missing}")
        results = yield tc("bash", command=heredoc(program), description="Run a CodeAct program")
        return parse(bash_output(results[0].content))
    return agent


@dataclass
class Ctx:
    repo: Path
    max_parallel: int | None = None
    system: str = ""  # the system prompt of the first request: what the model was told before its first move
    discovery: bool = False  # whether the CodeAct replay had to list the sandbox's tools first

    def abs(self, rel: str) -> str:
        return str(self.repo / rel)  # the CLI's view wants absolute paths


# ================================================================================================== the tasks
TODO_RE = r"#.*\bTODO\b"
OS_RE = r"^\s*(import\s+([\w.]+\s*,\s*)*os\b|from\s+os\b)"
DEF_RE = re.compile(r"\s*(async\s+)?def\s")
CLASS_RE = re.compile(r"\s*class\s")


def _py_files(repo: Path, *roots: str) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for r in roots for p in (repo / r).rglob("*.py") if p.is_file())


# --- 1. every TODO ------------------------------------------------------------------------------------------------
def truth_todo(repo: Path) -> Any:
    todos = []
    for rel in _py_files(repo, "src", "tests"):
        src = (repo / rel).read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT and re.search(r"\bTODO\b", tok.string):
                todos.append([rel, tok.start[0]])
    return {"todos": sorted(todos), "total": len(todos)}


def render_todo(a: Any) -> str:
    by_file: dict[str, list[int]] = {}
    for path, line in a["todos"]:
        by_file.setdefault(path, []).append(line)
    rows = [f"- {p}: {', '.join(map(str, ls))}" for p, ls in sorted(by_file.items())]
    return f"{a['total']} TODO comments in {len(by_file)} files (file: lines):\n" + "\n".join(rows) + \
        f"\n\nTotal: {a['total']}"


def baseline_todo(ctx: Ctx) -> Agent:
    results = yield tc("grep", pattern=TODO_RE, paths=["src", "tests"], glob="*.py", output_mode="content",
                       **{"-n": True})
    hits = parse_grep(results[0].content)
    return {"todos": [[p, n] for p, n, _ in hits], "total": len(hits)}


TODO_PROGRAM = r'''
hits = grep(pattern=r"#.*\bTODO\b", path="src", glob="*.py") + grep(pattern=r"#.*\bTODO\b", path="tests", glob="*.py")
lines = {}
for h in hits:
    lines.setdefault(h["path"], []).append(h["line"])
for path in sorted(lines):
    print(path + ": " + ",".join(str(n) for n in lines[path]))
print("total:", len(hits))
'''


def parse_todo_output(out: str) -> Any:
    todos, total = [], None
    for line in out.splitlines():
        if line.startswith("total:"):
            total = int(line.split(":")[1])
        elif line.strip():
            path, _, nums = line.rpartition(": ")
            todos += [[path, int(n)] for n in nums.split(",")]
    return {"todos": sorted(todos), "total": total}


# --- 2. per-file counts -----------------------------------------------------------------------------------------
def _stats_row(rel: str, src: str) -> list[Any]:
    lines = src.split("\n")[:-1] if src.endswith("\n") else src.split("\n")
    return [rel, sum(1 for ln in lines if DEF_RE.match(ln)), sum(1 for ln in lines if CLASS_RE.match(ln)),
            src.count("\n")]


def truth_stats(repo: Path) -> Any:
    rows = []
    for rel in _py_files(repo, "src"):
        src = (repo / rel).read_text(encoding="utf-8")
        tree = ast.parse(src)
        funcs = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))
        classes = sum(isinstance(n, ast.ClassDef) for n in ast.walk(tree))
        row = [rel, funcs, classes, src.count("\n")]
        assert _stats_row(rel, src) == row, f"the line patterns disagree with ast in {rel}"
        rows.append(row)
    return {"rows": rows}


def render_stats(a: Any) -> str:
    rows = a["rows"]
    out = ["| file | functions | classes | lines |", "|---|---:|---:|---:|"]
    out += [f"| {p} | {f} | {c} | {n} |" for p, f, c, n in rows]
    out.append(f"| **{len(rows)} files** | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} | "
               f"{sum(r[3] for r in rows)} |")
    return "\n".join(out)


def baseline_stats(ctx: Ctx) -> Agent:
    listing = yield tc("glob", pattern="src/**/*.py")
    files = parse_glob(listing[0].content)
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    return {"rows": [_stats_row(f, v.content) for f, v in zip(files, views)]}


STATS_PROGRAM = r'''
import re
print("path\tfunctions\tclasses\tlines")
for path in glob(pattern="*.py", path="src"):
    text = view(path=path)
    rows = text.split("\n")[:-1]
    defs = len([r for r in rows if re.match(r"\s*(async\s+)?def\s", r)])
    classes = len([r for r in rows if re.match(r"\s*class\s", r)])
    print(f"{path}\t{defs}\t{classes}\t{len(rows)}")
'''


def parse_stats_output(out: str) -> Any:
    rows = []
    for line in out.splitlines()[1:]:
        if line.strip():
            p, f, c, n = line.split("\t")
            rows.append([p, int(f), int(c), int(n)])
    return {"rows": sorted(rows)}


# --- 3. files importing os ------------------------------------------------------------------------------------
def truth_os(repo: Path) -> Any:
    files = []
    for rel in _py_files(repo, "src", "tests"):
        lines = set()
        for node in ast.walk(ast.parse((repo / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(a.name == "os" or a.name.startswith("os.") for a in node.names):
                lines.add(node.lineno)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                    (node.module == "os" or node.module.startswith("os.")):
                lines.add(node.lineno)
        if lines:
            files.append([rel, sorted(lines)])
    return {"files": files}


def render_os(a: Any) -> str:
    rows = [f"- {p}: line {', '.join(map(str, ls))}" for p, ls in a["files"]]
    return f"{len(a['files'])} files import os:\n" + "\n".join(rows)


def _group(hits: Iterable[tuple[str, int]]) -> list[list[Any]]:
    by: dict[str, list[int]] = {}
    for p, n in hits:
        by.setdefault(p, []).append(n)
    return [[p, sorted(ls)] for p, ls in sorted(by.items())]


def baseline_os(ctx: Ctx) -> Agent:
    results = yield tc("grep", pattern=OS_RE, paths=["src", "tests"], glob="*.py", output_mode="content",
                       **{"-n": True})
    return {"files": _group((p, n) for p, n, _ in parse_grep(results[0].content))}


OS_PROGRAM = r'''
OS = r"^\s*(import\s+([\w.]+\s*,\s*)*os\b|from\s+os\b)"
hits = grep(pattern=OS, path="src", glob="*.py") + grep(pattern=OS, path="tests", glob="*.py")
lines = {}
for h in hits:
    lines.setdefault(h["path"], []).append(str(h["line"]))
for path in sorted(lines):
    print(path + ": " + ",".join(lines[path]))
print(len(lines), "files")
'''


def parse_os_output(out: str) -> Any:
    hits = []
    for line in out.splitlines():
        if ": " in line:
            path, _, nums = line.rpartition(": ")
            hits += [(path, int(n)) for n in nums.split(",")]
    return {"files": _group(hits)}


# --- 4. validate every JSON config -----------------------------------------------------------------------------
def _valid_json(s: str) -> bool:
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


def truth_json(repo: Path) -> Any:
    files = sorted(p.relative_to(repo).as_posix() for p in (repo / "config").rglob("*.json"))
    return {"total": len(files), "invalid": [f for f in files if not _valid_json((repo / f).read_text("utf-8"))]}


def render_json(a: Any) -> str:
    bad = a["invalid"]
    return (f"{a['total'] - len(bad)} of {a['total']} configs are valid JSON; {len(bad)} are not:\n"
            + "\n".join(f"- {p}" for p in bad))


def baseline_json(ctx: Ctx) -> Agent:
    listing = yield tc("glob", pattern="config/**/*.json")
    files = parse_glob(listing[0].content)
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    # the model reads each file and judges it; json.loads stands in for that judgement
    return {"total": len(files), "invalid": [f for f, v in zip(files, views) if not _valid_json(v.content)]}


JSON_PROGRAM = r'''
import json
files = glob(pattern="*.json", path="config")
bad = []
for path in files:
    try:
        json.loads(view(path=path))
    except ValueError as err:
        bad.append(f"{path}: {err}")
print(f"{len(files) - len(bad)} of {len(files)} valid")
print("\n".join(bad))
'''


def parse_json_output(out: str) -> Any:
    lines = out.splitlines()
    total = int(lines[0].split(" of ")[1].split()[0])
    return {"total": total, "invalid": sorted(line.split(": ", 1)[0] for line in lines[1:] if line.strip())}


# --- 5. two MCP tools chained with built-in tools ------------------------------------------------------------------
MCP_PROMPT = ("Each package under src/acme/ has an OWNERS file naming its primary owner, then its secondary owner. "
              "Look up both owners with the demo MCP server's profile tool. A package's review capacity is the demo "
              "server's add tool applied to a = the primary owner's score x 2 and b = the secondary owner's score "
              "x 2 (scores are halves, so these are whole numbers). List every package with its capacity and owners, "
              "highest capacity first (ties by package name).")


def _owners(text_: str) -> list[str]:
    return [ln.strip() for ln in text_.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _mcp_direct(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Call the demo server straight through the MCP SDK (stdio), outside the CLI and outside CodeAct."""
    async def go() -> list[Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=sys.executable, args=[str(DEMO_SERVER)])
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    out = []
                    for name, arguments in calls:
                        res = await session.call_tool(name, arguments)
                        data = res.structured_content
                        if isinstance(data, dict) and set(data) == {"result"}:
                            data = data["result"]
                        out.append(data)
                    return out
    return asyncio.run(go())


def _capacity_rows(owners: dict[str, list[str]], scores: dict[str, float], caps: dict[str, int]) -> list[list[Any]]:
    rows = [[pkg, caps[pkg], names[0], names[1]] for pkg, names in owners.items()]
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def truth_mcp(repo: Path) -> Any:
    owners = {p.parent.name: _owners(p.read_text("utf-8")) for p in sorted((repo / "src" / "acme").glob("*/OWNERS"))}
    names = sorted({n for ns in owners.values() for n in ns})
    scores = dict(zip(names, (p["score"] for p in _mcp_direct([("profile", {"name": n}) for n in names]))))
    pkgs = sorted(owners)
    adds = _mcp_direct([("add", {"a": int(scores[owners[p][0]] * 2), "b": int(scores[owners[p][1]] * 2)})
                        for p in pkgs])
    return {"packages": _capacity_rows(owners, scores, dict(zip(pkgs, adds)))}


def render_mcp(a: Any) -> str:
    out = ["| package | review capacity | primary | secondary |", "|---|---:|---|---|"]
    out += [f"| {p} | {c} | {x} | {y} |" for p, c, x, y in a["packages"]]
    return "\n".join(out)


def baseline_mcp(ctx: Ctx) -> Agent:
    found = yield tc("grep", pattern=r"^[^#]", paths=["src"], glob="OWNERS", output_mode="content", **{"-n": True})
    owners: dict[str, list[str]] = {}
    for path, _line, name in parse_grep(found[0].content):  # sorted by path, then line: primary first
        owners.setdefault(path.split("/")[-2], []).append(name.strip())
    names = sorted({n for ns in owners.values() for n in ns})
    profiles = yield from parallel([tc("demo-profile", name=n) for n in names], ctx.max_parallel)
    scores = {n: mcp_value(r.content)["score"] for n, r in zip(names, profiles)}
    pkgs = sorted(owners)
    sums = yield from parallel([tc("demo-add", a=int(scores[owners[p][0]] * 2), b=int(scores[owners[p][1]] * 2))
                                for p in pkgs], ctx.max_parallel)
    return {"packages": _capacity_rows(owners, scores, {p: mcp_value(r.content) for p, r in zip(pkgs, sums)})}


MCP_PROGRAM = r'''
owners = {}
for path in glob(pattern="OWNERS", path="src"):
    owners[path.split("/")[-2]] = [n.strip() for n in view(path=path).splitlines() if n.strip() and not n.startswith("#")]
scores = {}
for name in sorted({n for names in owners.values() for n in names}):
    scores[name] = demo.profile(name=name)["score"]
rows = []
for pkg, names in owners.items():
    rows.append((demo.add(a=int(scores[names[0]] * 2), b=int(scores[names[1]] * 2)), pkg, names[0], names[1]))
for cap, pkg, first, second in sorted(rows, key=lambda r: (-r[0], r[1])):
    print(f"{pkg}\t{cap}\t{first}\t{second}")
'''


def parse_mcp_output(out: str) -> Any:
    rows = []
    for line in out.splitlines():
        if line.strip():
            p, c, x, y = line.split("\t")
            rows.append([p, int(c), x, y])
    return {"packages": rows}


# --- 6. one file: what does README.md say ----------------------------------------------------------------------
def summarize_readme(md: str) -> Any:
    lines = md.split("\n")
    title = next(ln[2:].strip() for ln in lines if ln.startswith("# "))
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# ")) + 1
    para: list[str] = []
    for ln in lines[start:]:
        if not ln.strip():
            if para:
                break
            continue
        para.append(ln.strip())
    sections = [ln[3:].strip() for ln in lines if ln.startswith("## ")]
    services = 0
    current = None
    for ln in lines:
        if ln.startswith("## "):
            current = ln[3:].strip()
        elif current == "Services" and ln.startswith("- **"):
            services += 1
    return {"title": title, "intro": " ".join(para), "sections": sections, "services": services}


def truth_readme(repo: Path) -> Any:
    return summarize_readme((repo / "README.md").read_text("utf-8"))


def render_readme(a: Any) -> str:
    return (f"README.md introduces **{a['title']}**: {a['intro']}\n\nIt has {len(a['sections'])} sections "
            f"({', '.join(a['sections'])}) and lists {a['services']} services.")


def baseline_readme(ctx: Ctx) -> Agent:
    results = yield tc("view", path=ctx.abs("README.md"))
    return summarize_readme(results[0].content)


README_PROGRAM = 'print(view(path="README.md"))'


def parse_readme_output(out: str) -> Any:
    return summarize_readme(out)


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    prompt: str
    multi_step: bool
    truth: Callable[[Path], Any]
    render: Callable[[Any], str]
    baseline: Callable[[Ctx], Agent]
    program: str
    parse: Callable[[str], Any]
    needs: tuple[str, ...] = ()  # sandbox tools the program calls beyond the documented built-ins

    def codeact(self) -> Callable[[Ctx], Agent]:
        return codeact_agent(self.program, self.parse, self.needs)

    def live_check(self, final: str, truth: Any) -> bool | None:
        """A loose check of a live answer: does it state the decisive facts? (None: no check defined)"""
        if self.name == "todo":
            return str(truth["total"]) in final
        if self.name == "os_imports":
            return all(p.rsplit("/", 1)[-1] in final for p, _ in truth["files"])
        if self.name == "json":
            return all(p.rsplit("/", 1)[-1] in final for p in truth["invalid"])
        if self.name == "mcp_chain":
            return all(p in final for p, *_ in truth["packages"]) and str(truth["packages"][0][1]) in final
        if self.name == "readme":
            return truth["title"] in final
        return None


TASKS: list[Task] = [
    Task("todo", "every TODO, with file, line and total",
         "List every TODO comment in the Python files under src/ and tests/, with its file and line number, and give "
         "the total.", True, truth_todo, render_todo, baseline_todo, TODO_PROGRAM, parse_todo_output),
    Task("stats", "per-file functions, classes, lines (table)",
         "For every Python file under src/, count its functions (def and async def, methods and nested functions "
         "included), its classes and its lines. Answer with a table.", True, truth_stats, render_stats,
         baseline_stats, STATS_PROGRAM, parse_stats_output),
    Task("os_imports", "files importing os, with line numbers",
         "Which Python files under src/ and tests/ import the os module (import os, import os.path, from os import "
         "..., including imports inside functions)? Give each file with the line numbers of those imports.", True,
         truth_os, render_os, baseline_os, OS_PROGRAM, parse_os_output),
    Task("json", "validate every JSON config",
         "Validate every JSON config under config/: which files are not valid JSON, and how many are valid?", True,
         truth_json, render_json, baseline_json, JSON_PROGRAM, parse_json_output),
    Task("mcp_chain", "two MCP tools chained with built-in tools", MCP_PROMPT, True, truth_mcp, render_mcp,
         baseline_mcp, MCP_PROGRAM, parse_mcp_output, needs=("demo.profile", "demo.add")),
    Task("readme", "one file: what does README.md say", "What does README.md say?", False, truth_readme,
         render_readme, baseline_readme, README_PROGRAM, parse_readme_output),
]
TASKS_BY_NAME = {t.name: t for t in TASKS}


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


def build_workspace(root: Path, *, seed: int, packages: int, mcp: bool = True, venv: Path = VENV_CACHE,
                    copilot: str | None = None) -> Workspace:
    """Generate, configure and stamp the benchmark repository under ``root``; prepare the launcher's venv."""
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
    if mcp:
        (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
            "type": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)]}}}, indent=2) + "\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "acme platform")
    bare = root / "acme-bare"
    shutil.copytree(repo, bare, symlinks=True)
    times["generate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_copy(str(template), repo, data={"enforcement": "off"}, defaults=True, unsafe=True, vcs_ref="HEAD",
             quiet=True, skip_tasks=True, overwrite=True)
    times["stamp_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    venv.mkdir(parents=True, exist_ok=True)
    _run([str(repo / LAUNCHER), "setup"], repo, launcher_env(venv))  # before any session: the CLI waits ~30 s
    times["launcher_setup_s"] = time.perf_counter() - t0
    if mcp:
        t0 = time.perf_counter()
        _run([str(repo / LAUNCHER), "discover"], repo, launcher_env(venv), timeout=120)
        times["discover_s"] = time.perf_counter() - t0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "codeact")
    cache = root / "copilot-cache"
    cache.mkdir(exist_ok=True)
    return Workspace(root, repo, bare, layout, venv, copilot, cache, mcp, times)


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
    compactions: int = 0  # the CLI's own context-compaction requests (counted in requests and bytes)

    def row(self) -> dict[str, Any]:
        return self.__dict__.copy()


def parse_cli_events(stdout: str) -> dict[str, Any]:
    """What the CLI itself reports in ``--output-format json`` (JSONL): model calls, tool calls by name, whether a
    bash call ran the CodeAct launcher, the final answer, the exit code. Used for the scripted sessions (to check
    the mock's figures) and for ``--live`` (where it is all there is)."""
    turns = 0
    tools: dict[str, int] = {}
    codeact_runs = 0
    final = None
    exit_code = None
    usage: dict[str, Any] = {}
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind, data = event.get("type"), event.get("data") or {}
        if kind == "model.call_start":
            turns += 1
        elif kind == "tool.execution_start":
            name = data.get("toolName") or "?"
            tools[name] = tools.get(name, 0) + 1
            command = str((data.get("arguments") or {}).get("command") or "")
            if name in ("bash", "powershell") and re.search(r"codeact(\.ps1)?\s+run\b", command):
                codeact_runs += 1
        elif kind == "assistant.message" and not data.get("toolRequests"):
            final = data.get("content")
        elif kind == "result":
            exit_code = event.get("exitCode")
            usage = event.get("usage") or {}
    return {"model_calls": turns, "tool_calls": sum(tools.values()), "tools": tools, "codeact_runs": codeact_runs,
            "final": final, "exit_code": exit_code, "usage": usage}


def usage_summary(path: Path) -> dict[str, Any]:
    """The CLI's ``--usage-output-file`` JSON, reduced to its totals."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    models = {}
    for name, m in (data.get("modelMetrics") or {}).items():
        models[name] = {"requests": (m.get("requests") or {}).get("count"), **(m.get("usage") or {})}
    return {"premium_request_cost": data.get("totalPremiumRequestCost"), "api_ms": data.get("totalApiDurationMs"),
            "models": models}


_counter = iter(range(1, 1_000_000))


def valid_strategy(name: str) -> bool:
    return name in ("baseline", "codeact", "codeact-agent") or bool(re.fullmatch(r"baseline@[1-9]\d*", name))


def run_session(ws: Workspace, task: Task, strategy: str, est: Estimator, *, repo: Path | None = None,
                timeout: float = 600) -> tuple[Session, Replay]:
    """One ``copilot -p`` session of ``task`` with ``strategy``; the figures come from the recorded requests."""
    repo = repo or ws.repo
    base = strategy.startswith("baseline")
    ctx = Ctx(repo, int(strategy.split("@")[1]) if "@" in strategy else None)
    agent = task.baseline(ctx) if base else task.codeact()(ctx)
    replay = Replay(agent, task.render, ctx)
    home = ws.root / "homes" / f"{next(_counter):03d}"  # one length: the path shows in the system prompt
    with MockModel(replay.script()) as model:
        env = isolated_env(home, ws.cache, {**model.env(), "CODEACT_VENV": str(ws.venv)})
        argv = [ws.copilot, "-p", task.prompt, "--allow-all-tools", "--trust-folder", "--no-auto-update",
                "--output-format", "json", "--usage-output-file", str(home / "usage.json")]
        if strategy == "codeact-agent":
            argv += ["--agent", "codeact"]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        requests = list(model.requests)
        replies = list(model.replies)
        errors = list(model.errors)
    where = f"{task.name}/{strategy}"
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
        discovery_turn=ctx.discovery, compactions=replay.compactions,
    ), replay


def run_pair(ws: Workspace, task: Task, strategies: Sequence[str], est: Estimator, truth: Any) -> list[Session]:
    """Run ``task`` with each strategy; assert every answer equals ``truth``. A capped baseline (``baseline@N``) is
    skipped where the uncapped baseline never issued more than N calls in a turn (it would be the same session)."""
    out: list[Session] = []
    expected = task.render(truth)
    for strategy in strategies:
        if "@" in strategy:
            full = next((s for s in out if s.strategy == "baseline"), None)
            if full is not None and full.max_calls_per_turn <= int(strategy.split("@")[1]):
                continue
        session, replay = run_session(ws, task, strategy, est)
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
    instructions' example — which the runtime prints as JSON indented by 2; and that JSON compact (one line)."""
    def run(program: str) -> str:
        return subprocess.run([str(ws.repo / LAUNCHER), "run", "-"], cwd=ws.repo, env=launcher_env(ws.venv),
                              input=program, capture_output=True, text=True, timeout=120, check=True).stdout

    printed = run(TODO_PROGRAM)
    pretty = run(TODO_AS_EXPRESSION)
    one_line = json.dumps(json.loads(pretty), separators=(",", ":"), ensure_ascii=False) + "\n"
    return {"task": "todo", "printed_lines": len(printed.encode()), "last_expression_indented": len(pretty.encode()),
            "last_expression_compact": len(one_line.encode())}


def fixed_prefix_session(ws: Workspace, repo: Path, agent: str | None = None) -> tuple[int, list[str], dict]:
    """The fixed prefix of a one-request session in ``repo`` (the model answers at once)."""
    with MockModel([text("ok")]) as model:
        env = isolated_env(ws.root / "homes" / f"{next(_counter):03d}", ws.cache, model.env())
        argv = [ws.copilot, "-p", "hi", "--allow-all-tools", "--trust-folder", "--no-auto-update"]
        if agent:
            argv += ["--agent", agent]
        subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
        req = model.requests[0]
    return len(compact(fixed_body(req.body))), req.tool_names, req.body


# ================================================================================================ reporting
def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return {"os": f"{platform.system()} {platform.release()}", "cpu": cpu, "cores": os.cpu_count(), "memory": mem,
            "python": platform.python_version(), "copilot_cli": COPILOT_VERSION}


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def summarize(sessions: list[Session], tasks: list[Task]) -> list[dict[str, Any]]:
    """CodeAct (and the codeact agent) against the baseline, per task; against the capped baseline too, where one
    ran (``against`` names the baseline). The targets are judged against the uncapped baseline only."""
    by = {(s.task, s.strategy): s for s in sessions}
    out = []
    for t in tasks:
        for against in sorted({s.strategy for s in sessions if s.task == t.name and s.strategy.startswith("baseline")},
                              key=lambda n: (n != "baseline", n)):
            base = by[(t.name, against)]
            for strategy in ("codeact", "codeact-agent"):
                s = by.get((t.name, strategy))
                if s is None:
                    continue
                row = {"task": t.name, "strategy": strategy, "against": against, "multi_step": t.multi_step,
                       "task_bytes_ratio": ratio(s.task_bytes, base.task_bytes),
                       "requests_ratio": ratio(s.requests, base.requests),
                       "input_bytes_ratio": ratio(s.input_bytes, base.input_bytes),
                       "peak_bytes_ratio": ratio(s.peak_bytes, base.peak_bytes),
                       "task_tokens_ratio": ratio(s.task_tokens, base.task_tokens)}
                if t.multi_step and against == "baseline":
                    row["task_bytes_target_met"] = row["task_bytes_ratio"] is not None and \
                        row["task_bytes_ratio"] <= TARGET_TASK_BYTES
                    row["requests_target_met"] = row["requests_ratio"] is not None and \
                        row["requests_ratio"] <= TARGET_REQUESTS
                out.append(row)
    return out


def payback(sessions: list[Session], tasks: list[Task], always_on_bytes: int) -> list[dict[str, Any]]:
    """Per multi-step task: does CodeAct save more task bytes than the always-on context costs over its session
    (always-on bytes x the CodeAct session's requests)?"""
    by = {(s.task, s.strategy): s for s in sessions}
    out = []
    for t in tasks:
        b, c = by.get((t.name, "baseline")), by.get((t.name, "codeact"))
        if t.multi_step and b and c:
            cost, saved = always_on_bytes * c.requests, b.task_bytes - c.task_bytes
            out.append({"task": t.name, "codeact_requests": c.requests, "cost_bytes": cost,
                        "saved_task_bytes": saved, "paid_back": saved >= cost})
    return out


def _kb(n: int) -> str:
    return f"{n / 1000:,.1f}"


def _pct(r: float | None) -> str:
    return "—" if r is None else f"{100 * r:.0f}%" if r >= 0.1 else f"{100 * r:.1f}%"


def markdown(report: dict[str, Any]) -> str:
    sessions = report["sessions"]
    ratios = {(r["task"], r["strategy"], r["against"]): r for r in report["ratios"]}
    titles = {t["name"]: t["title"] for t in report["tasks"]}
    m = report["machine"]
    lines = [f"### CodeAct vs the CLI's own tools — {LABEL}", "",
             f"Generated by `{report['command']}` on {report['generated']}. Copilot CLI {m['copilot_cli']} offline, "
             "the model's moves scripted (tests/copilot/mock_model.py), every answer computed from the tool results "
             f"the model received and checked against the ground truth. Machine: {m['cpu']}, {m['cores']} cores, "
             f"{m['memory']}, {m['os']}, Python {m['python']}. Workspace: {report['workspace']['files']} files, "
             f"{_kb(report['workspace']['bytes'])} KB, seed {report['seed']}. Tokens (~): {report['estimator']}. "
             "KB = 1,000 bytes.", "",
             "| task | strategy | requests | tool calls | input KB | task KB | peak KB | ~input tokens | ~task tokens "
             "| wall s | task bytes vs baseline | requests vs baseline |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in sessions:
        r = ratios.get((s["task"], s["strategy"], "baseline"))
        lines.append(
            f"| {titles[s['task']]} | {s['strategy']} | {s['requests']} | {s['tool_calls']} | {_kb(s['input_bytes'])} "
            f"| {_kb(s['task_bytes'])} | {_kb(s['peak_bytes'])} | {s['input_tokens']:,} | {s['task_tokens']:,} "
            f"| {s['wall_s']:.1f} | {_pct(r['task_bytes_ratio']) if r else '—'} "
            f"| {_pct(r['requests_ratio']) if r else '—'} |")
    compacted = [f"{titles[s['task']]} / {s['strategy']} ({s['compactions']})" for s in sessions if s["compactions"]]
    if compacted:
        lines += ["", "The CLI compacted the context (a background request carrying the whole conversation, counted "
                      "above) in: " + "; ".join(compacted) + "."]
    notes = sorted({titles[s["task"]] for s in sessions if s.get("discovery_turn")})
    if notes:
        lines += ["", f"CodeAct listed the sandbox's tools first (`codeact tools`, one more request) on: "
                      f"{'; '.join(notes)} — the system prompt did not name the MCP tools it needed."]
    lines += ["", f"Targets, multi-step tasks, codeact vs baseline: task bytes ≤ {TARGET_TASK_BYTES:.0%}, model "
                  f"requests ≤ {TARGET_REQUESTS:.0%}.", "",
              "| task | task bytes | met | requests | met |", "|---|---:|---|---:|---|"]
    for r in report["ratios"]:
        if r["strategy"] == "codeact" and r["multi_step"] and r["against"] == "baseline":
            lines.append(f"| {titles[r['task']]} | {_pct(r['task_bytes_ratio'])} | "
                         f"{'yes' if r['task_bytes_target_met'] else '**no**'} | {_pct(r['requests_ratio'])} | "
                         f"{'yes' if r['requests_target_met'] else '**no**'} |")
    capped = [r for r in report["ratios"] if r["strategy"] == "codeact" and r["against"] != "baseline"]
    if capped:
        lines += ["", "Sensitivity: the baseline above issues every independent call in one turn (190 views at once "
                      "— more than models do). Capped at " + ", ".join(sorted({r["against"].split("@")[1] for r in
                                                                              capped})) +
                  " parallel calls a turn, it needs more requests:", "",
                  "| task | baseline | requests | task KB | codeact task bytes vs it | codeact requests vs it |",
                  "|---|---|---:|---:|---:|---:|"]
        by = {(s["task"], s["strategy"]): s for s in sessions}
        for r in capped:
            b = by[(r["task"], r["against"])]
            lines.append(f"| {titles[r['task']]} | {r['against']} | {b['requests']} | {_kb(b['task_bytes'])} | "
                         f"{_pct(r['task_bytes_ratio'])} | {_pct(r['requests_ratio'])} |")
    ao = report.get("always_on")
    if ao:
        lines += ["", "Always-on context this project adds to every request, against the MCP tool schemas it keeps "
                      "out of context (bytes; from the stamped files and the MCP SDK, no CLI):", "",
                  "| item | bytes |", "|---|---:|"]
        lines += [f"| {k} | {v:,} |" for k, v in ao["files"]["parts"].items()]
        lines.append(f"| **always-on total** | **{ao['files']['bytes']:,}** |")
        if ao.get("cli_delta_bytes") is not None:
            lines.append(f"| cross-check through the CLI: fixed prefix stamped − unstamped | {ao['cli_delta_bytes']:,} |")
        for name, v in ao["mcp"].items():
            if isinstance(v, dict) and "bytes" in v:
                lines.append(f"| test MCP server `{name}`: {v['tools']} tool schemas | {v['bytes']:,} |")
        lines.append(f"| **MCP schemas total** | **{ao['mcp']['bytes']:,}** |")
        if ao.get("codeact_agent_fixed_bytes") is not None:
            lines.append(f"| measured fixed prefix: default agent (CLI tools + MCP tools) / `--agent codeact` "
                         f"(bash only) | {ao['default_fixed_bytes']:,} / {ao['codeact_agent_fixed_bytes']:,} |")
        pbs = ao.get("payback") or []
        if pbs:
            first = pbs[0]
            lines += ["", f"Paid back within the first multi-step task ({titles[first['task']]})? "
                          f"**{'yes' if first['paid_back'] else 'no'}**. Per task — always-on bytes "
                          f"({ao['payback_bytes']:,}, {ao['payback_basis']}) × CodeAct requests, against the task "
                          "bytes CodeAct saved:", "",
                      "| task | always-on cost | task bytes saved | paid back |", "|---|---:|---:|---|"]
            lines += [f"| {titles[p['task']]} | {p['cost_bytes']:,} | {p['saved_task_bytes']:,} | "
                      f"{'yes' if p['paid_back'] else '**no**'} |" for p in pbs]
    of = report.get("output_formats")
    if of:
        lines += ["", "How the program hands back its answer matters (the TODO answer, bytes of output; launcher only, "
                      "no CLI):", "", "| output | bytes |", "|---|---:|",
                  f"| printed compact lines (the benchmark's program) | {of['printed_lines']:,} |",
                  f"| the same data as the last expression, as the runtime prints it now (JSON, indent 2) | "
                  f"{of['last_expression_indented']:,} |",
                  f"| that value as one-line JSON | {of['last_expression_compact']:,} |"]
    return "\n".join(lines) + "\n"


BLOCK_BEGIN = "<!-- codeact_vs_baseline:begin — generated by benchmarks/bench_codeact_vs_baseline.py; do not edit -->"
BLOCK_END = "<!-- codeact_vs_baseline:end -->"
README_BLOCKS = (HERE / "README.md", REPO_ROOT / "README.md")  # updated where they hold the two markers


def update_block(path: Path, md: str) -> bool:
    """Replace what lies between the markers in ``path`` with ``md``; False where the markers are absent."""
    if not path.exists():
        return False
    text_ = path.read_text(encoding="utf-8")
    start, end = text_.find(BLOCK_BEGIN), text_.find(BLOCK_END)
    if start < 0 or end < start:
        return False
    path.write_text(text_[:start + len(BLOCK_BEGIN)] + "\n" + md + text_[end:], encoding="utf-8")
    return True


# ===================================================================================================== live
LIVE_DOC = """--live: run each task's prompt with a REAL model through your logged-in Copilot CLI (network; premium
requests are billed to your subscription). Nothing is scripted: the model chooses its tools. Reported per task: model
calls, tool calls by name, whether it ran CodeAct (a bash call of `codeact run`), whether the instructions say it
should (every multi-step task), a loose check of the answer, and the CLI's own usage figures
(--usage-output-file)."""


class LiveError(SystemExit):
    pass


def live_run(ws: Workspace, tasks: list[Task], model_name: str | None, agent: str | None) -> dict[str, Any]:
    """The opt-in live run: the user's own environment and login, the stamped workspace, no mock."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
    env["CODEACT_VENV"] = str(ws.venv)
    if env.get("COPILOT_OFFLINE", "").lower() == "true":
        raise LiveError("bench --live: COPILOT_OFFLINE=true is set; unset it to reach a real model")
    rows = []
    for task in tasks:
        truth = task.truth(ws.repo)
        out = ws.root / "live" / task.name
        out.mkdir(parents=True, exist_ok=True)
        argv = [ws.copilot, "-p", task.prompt, "--allow-all-tools", "--trust-folder", "--no-auto-update",
                "--output-format", "json", "--usage-output-file", str(out / "usage.json"),
                "--log-dir", str(out / "logs"), "--share", str(out / "session.md")]
        if model_name:
            argv += ["--model", model_name]
        if agent:
            argv += ["--agent", agent]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=ws.repo, env=env, capture_output=True, text=True, timeout=1800,
                              stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        (out / "events.jsonl").write_text(proc.stdout)
        (out / "stderr.txt").write_text(proc.stderr)
        said = proc.stdout + proc.stderr
        if proc.returncode != 0 and re.search(r"No authentication information found|not logged in|/login", said):
            raise LiveError("bench --live: the Copilot CLI is not logged in. Run `copilot` and use /login (or set "
                            "COPILOT_GITHUB_TOKEN / GH_TOKEN), then run the benchmark again.\n" + said[-800:])
        if proc.returncode != 0:
            raise LiveError(f"bench --live: copilot exited {proc.returncode} on task {task.name}:\n{said[-2000:]}")
        events = parse_cli_events(proc.stdout)
        final = events.pop("final") or ""
        rows.append({"task": task.name, "multi_step": task.multi_step, "should_use_codeact": task.multi_step,
                     "chose_codeact": events["codeact_runs"] > 0, **events, "wall_s": round(wall, 1),
                     "answer_check": task.live_check(final, truth), "usage": usage_summary(out / "usage.json"),
                     "artifacts": str(out)})
        print(f"live {task.name}: {events['model_calls']} model calls, tools {events['tools']}, "
              f"codeact={'yes' if events['codeact_runs'] else 'no'}", flush=True)
    return {"label": "live", "model": model_name or "(CLI default)", "agent": agent, "rows": rows}


def live_markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    multi = [r for r in rows if r["should_use_codeact"]]
    single = [r for r in rows if not r["should_use_codeact"]]
    lines = [f"### Live run — model {report['model']}{', agent ' + report['agent'] if report['agent'] else ''}", "",
             f"Generated by `{report['command']}` on {report['generated']}. The model chose CodeAct on "
             f"{sum(r['chose_codeact'] for r in multi)} of {len(multi)} multi-step tasks (where the instructions say "
             f"it should)" + (f" and on {sum(r['chose_codeact'] for r in single)} of {len(single)} single-file "
                              "tasks (where they say it should not)" if single else "") + ".", "",
             "| task | should use CodeAct | chose CodeAct | model calls | tool calls | tools | answer check | input "
             "tokens (CLI) | output tokens (CLI) | wall s |", "|---|---|---|---:|---:|---|---|---:|---:|---:|"]
    for r in report["rows"]:
        models = (r.get("usage") or {}).get("models") or {}
        tin = sum(m.get("inputTokens") or 0 for m in models.values())
        tout = sum(m.get("outputTokens") or 0 for m in models.values())
        lines.append(f"| {r['task']} | {'yes' if r['should_use_codeact'] else 'no'} | "
                     f"{'yes' if r['chose_codeact'] else 'no'} | {r['model_calls']} | {r['tool_calls']} | "
                     f"{', '.join(f'{k}×{v}' for k, v in r['tools'].items())} | {r['answer_check']} | {tin:,} | "
                     f"{tout:,} | {r['wall_s']} |")
    return "\n".join(lines) + "\n"


# ====================================================================================================== main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=LIVE_DOC)
    parser.add_argument("--seed", type=int, default=7, help="workspace seed (default 7)")
    parser.add_argument("--packages", type=int, default=14, help="packages in the workspace (default 14, max 16)")
    parser.add_argument("--tasks", default=",".join(TASKS_BY_NAME), help="comma list of tasks (default: all)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help="comma list of baseline, codeact, codeact-agent, baseline@N (N parallel calls a turn "
                             f"at most) (default: {','.join(STRATEGIES)})")
    parser.add_argument("--json", type=Path, help="raw results (default: results/codeact_vs_baseline.json for the "
                                                  "default run, ...partial.json for any other)")
    parser.add_argument("--md", type=Path, help="the Markdown tables (default: as --json, .md)")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it (default: a temp folder)")
    parser.add_argument("--live", action="store_true", help="run with a real model (see below); not in CI")
    parser.add_argument("--model", help="--live: the model to ask the CLI for (default: the CLI's)")
    parser.add_argument("--agent", help="--live: run the prompts with this custom agent (e.g. codeact)")
    args = parser.parse_args(argv)
    default_run = (args.seed, args.packages, args.tasks, args.strategies) == (
        7, 14, ",".join(TASKS_BY_NAME), ",".join(STRATEGIES))
    stem = "codeact_vs_baseline.live" if args.live else \
        "codeact_vs_baseline" if default_run else "codeact_vs_baseline.partial"
    args.json = args.json or RESULTS / f"{stem}.json"
    args.md = args.md or RESULTS / f"{stem}.md"

    tasks = [TASKS_BY_NAME[n] for n in args.tasks.split(",") if n]
    strategies = [s for s in args.strategies.split(",") if s]
    if unknown := [s for s in strategies if not valid_strategy(s)]:
        parser.error(f"unknown strategies {unknown}; use baseline, codeact, codeact-agent or baseline@N")
    copilot, how = find_copilot()
    if copilot is None:
        print(f"bench: {how}", file=sys.stderr)
        return 2
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="codeact-bench-"))
    keep = bool(args.keep) or args.live  # a live run's session logs stay for reading
    if args.keep and scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        print(f"bench: building the workspace in {scratch} ...", flush=True)
        ws = build_workspace(scratch, seed=args.seed, packages=args.packages, copilot=copilot)
        if args.live:
            report = live_run(ws, tasks, args.model, args.agent)
            report |= {"generated": time.strftime("%Y-%m-%d"), "machine": machine(),
                       "command": " ".join(["python benchmarks/bench_codeact_vs_baseline.py",
                                            *(sys.argv[1:] if argv is None else argv)])}
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2) + "\n")
            args.md.write_text(live_markdown(report))
            print(live_markdown(report))
            return 0
        est = Estimator()
        warm_up(ws)
        sessions: list[Session] = []
        truths = {}
        for task in tasks:
            truths[task.name] = task.truth(ws.repo)
            got = run_pair(ws, task, strategies, est, truths[task.name])
            sessions += got
            for s in got:
                print(f"{task.name:11} {s.strategy:14} requests={s.requests:<3} tools={s.tool_calls:<4} "
                      f"input={s.input_bytes:>9,} task={s.task_bytes:>9,} peak={s.peak_bytes:>8,} "
                      f"~tokens={s.input_tokens:>8,} wall={s.wall_s:5.1f}s ok", flush=True)
        ratios = summarize(sessions, tasks)
        ao_files = always_on(ws.repo)
        stamped_fixed, _, _ = fixed_prefix_session(ws, ws.repo)
        bare_fixed, _, _ = fixed_prefix_session(ws, ws.bare)
        agent_fixed, _, _ = fixed_prefix_session(ws, ws.repo, agent="codeact")
        delta = stamped_fixed - bare_fixed
        always = {"files": ao_files, "mcp": mcp_schema_bytes(), "cli_delta_bytes": delta,
                  "default_fixed_bytes": stamped_fixed, "codeact_agent_fixed_bytes": agent_fixed,
                  "unstamped_fixed_bytes": bare_fixed, "payback_bytes": delta,
                  "payback_basis": "measured through the CLI"}
        always["payback"] = payback(sessions, tasks, delta)
        formats = output_formats(ws) if "todo" in truths else None
        report = {
            "benchmark": "codeact_vs_baseline", "label": LABEL, "generated": time.strftime("%Y-%m-%d"),
            "command": " ".join(["python benchmarks/bench_codeact_vs_baseline.py",
                                 *(sys.argv[1:] if argv is None else argv)]),
            "machine": machine(), "seed": args.seed, "strategies": strategies, "estimator": est.name,
            "workspace": {"files": len(ws.layout.files), "bytes": ws.layout.bytes, "packages": args.packages,
                          # absolute paths show in the requests (the cwd in the system prompt, view's paths)
                          "path": str(ws.repo),
                          "setup_s": {k: round(v, 2) for k, v in ws.setup_s.items()}},
            "definitions": {
                "input_bytes": "sum of the request bodies the model received in the session",
                "fixed_bytes": "bytes of the first request with its conversation removed (system message, tool "
                               "schemas, settings): what every request of the session carries whatever the task",
                "task_bytes": "input bytes minus, per request, that request's fixed bytes",
                "peak_bytes": "the largest single request body",
                "tokens": f"estimated: {est.name}, over message texts + tool-call arguments + 3 per message + "
                          "compact JSON of the tool schemas",
                "wall_s": "the copilot process, start to exit (includes CLI start-up and MCP server start)"},
            "tasks": [{"name": t.name, "title": t.title, "prompt": t.prompt, "multi_step": t.multi_step,
                       "codeact_program": t.program.strip(),
                       "truth_sha256": hashlib.sha256(t.render(truths[t.name]).encode()).hexdigest()}
                      for t in tasks],
            "sessions": [s.row() for s in sessions], "ratios": ratios, "always_on": always,
            "output_formats": formats}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        md = markdown(report)
        args.md.write_text(md)
        if default_run and args.json == RESULTS / "codeact_vs_baseline.json":
            for readme in README_BLOCKS:
                if update_block(readme, md):
                    print(f"bench: updated the figures in {readme.relative_to(REPO_ROOT)}")
        print()
        print(md)
        return 0
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
        elif args.live:
            print(f"bench: the live sessions' events, logs and transcripts are under {scratch / 'live'}")


if __name__ == "__main__":
    sys.exit(main())
