"""The scripted model's side of a session: token estimate, the CLI's tool-result formats, strategies as generators.

A strategy is a generator that yields a turn (one ``ToolCall`` or a list: parallel tool calls) and is resumed with
the tool results the model received; it returns the answer. ``Replay`` plays it as the mock model's script.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.copilot.mock_model import ChatRequest, ToolCall, ToolResult, text

LAUNCHER = ".codeact/bin/codeact"


# ================================================================================================ token estimate
class Estimator:
    """Token estimate of a request: OpenAI's o200k_base BPE (``bpe-openai``, which bundles its vocabulary and works
    offline) over what a chat template would render — each message's text, each tool call's name and arguments,
    3 tokens per message (the OpenAI cookbook's per-message overhead) and the compact JSON of the tool schemas.
    Without ``bpe-openai`` the same texts are counted as UTF-8 bytes / 4, and the name says so."""

    def __init__(self) -> None:
        self._count: Callable[[str], int]
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

    def reply(self, message: dict[str, Any]) -> tuple[int, int]:
        """What the model generated in one reply: (UTF-8 bytes, ~tokens) of its text and tool calls."""
        texts = [message.get("content") or ""]
        for tc in message.get("tool_calls") or []:
            fn = tc.get("function") or {}
            texts += [fn.get("name") or "", fn.get("arguments") or ""]
        return sum(len(t.encode()) for t in texts), sum(self.count(t) for t in texts)

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
_GREP_OMITTED = re.compile(r"^\s*\.\.\. \d+ more match\(es\) omitted")


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
        short: list[tuple[str, int, str]] = []
        for line in lines:
            m = _GREP_INLINE.match(line)
            if m is None:
                if line.strip():
                    raise ValueError(f"not a grep content result: {content[:200]!r}")
                continue
            short.append((m.group(1), int(m.group(2)), m.group(3)))
        return sorted(short)
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
        if _GREP_OMITTED.match(line):
            raise Incomplete(f"the CLI cut this grep result ({line.strip()}); narrow the search")
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


_COUNT_HEAD = re.compile(r"^\[grep count: (\d+) match\(es\) across (\d+) file\(s\)")
_COUNT_DIR = re.compile(r"^\s*(\d+) in (\d+) file\(s\)\s+(\S.*?)\s*$")


def count_summary_folders(content: str) -> dict[str, int] | None:
    """A summarised count result (1.0.102 prints ``[grep count: N match(es) across M file(s) with matches]``, the
    top files, then ``K in F file(s)  DIR`` per folder once a count spans many files) -> {folder: files}; None
    for a plain per-file result."""
    head = _COUNT_HEAD.match(content)
    if head is None:
        return None
    folders = {m.group(3): int(m.group(2)) for ln in content.splitlines() if (m := _COUNT_DIR.match(ln))}
    if sum(folders.values()) != int(head.group(2)):
        raise Incomplete(f"the count summary lists {sum(folders.values())} of {head.group(2)} files by folder")
    return folders


def parse_count(content: str) -> dict[str, int]:
    """The CLI's ``grep`` count-mode output (``path:N`` per file with a match, unsorted) as {path: N}."""
    if content.strip() in ("", "No matches found."):
        return {}
    if _COUNT_HEAD.match(content):
        raise Incomplete("the CLI summarised this count (top files and folders only); count fewer files per call")
    out: dict[str, int] = {}
    for line in content.splitlines():
        if not line.strip():
            continue
        path, sep, n = line.rpartition(":")
        if not sep or not n.isdigit():
            raise ValueError(f"not a grep count result: {line!r}")
        out[path[2:] if path.startswith("./") else path] = int(n)
    return out


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

    def __init__(self, agent: Agent, render: Callable[[Any], str], ctx: Ctx | None = None) -> None:
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
                    self.ctx.tools = tuple(request.tool_names)
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


# ==================================================================== results past the CLI's inline window
_SPILL = re.compile(r"^Output too large to read at once \(([\d.]+) KB\)\. Saved to: (\S+)")
_VIEW_CUT = re.compile(r"\n\n\[Output truncated\. Use view_range=\[(\d+), \.\.\.\] to continue reading\..*?"
                       r"File has at least (\d+) lines\.\]\s*$", re.S)
SHELL_CHUNK_LINES = 200


def read_spills(agent: Agent, ctx: Ctx) -> Agent:
    """Wrap a strategy so that a tool result the CLI spilled to a file (``Output too large to read at once ...
    Saved to: PATH``, past its ~20 KiB inline window) is read back, as a model must, before the strategy sees it:
    ``view`` with ``view_range`` chunks (``bash`` + ``sed -n`` where ``view`` is not offered). Those calls are
    turns of the session like any other, so their requests and bytes are charged to the strategy."""
    try:
        turn = next(agent)
        while True:
            results = yield turn
            out = []
            for r in results:
                m = _SPILL.match(r.content)
                if m is None:
                    out.append(r)
                    continue
                ctx.spills += 1
                text_ = yield from (_read_back_view(m.group(2), ctx) if "view" in ctx.tools or not ctx.tools
                                    else _read_back_bash(m.group(2), ctx))
                tail = _SHELL_TAIL.search(r.content)
                out.append(ToolResult(r.call_id, r.name, text_ + ("\n" + tail.group(0).lstrip("\n") if tail else "")))
            turn = agent.send(out)
    except StopIteration as stop:
        return stop.value


def _read_back_view(path: str, ctx: Ctx) -> Agent:
    """The file in ``view_range`` chunks: the first read shows how many lines fit (the CLI cuts a view at ~20 KB
    and names the line to go on from; the last line shown may be cut, so it is read again); the rest is then read
    in parallel chunks of that many lines (``max_parallel`` a turn), going on sequentially where a chunk is cut."""
    got: list[str] = []
    start, step, total = 1, 0, 0
    while True:
        if step:
            ranges: list[Any] = []
            while len(ranges) < (ctx.max_parallel or MAX_PARALLEL) - 1 and start + step - 1 < total:
                ranges.append([start, start + step - 1])
                start += step
            ranges.append([start, -1])
        else:
            ranges = [[start, -1]]
        results = yield [tc("view", path=path, view_range=r) for r in ranges]
        ctx.spill_calls += len(ranges)
        for r, res in zip(ranges, results):
            m = _VIEW_CUT.search(res.content)
            if m is None:
                got += res.content.split("\n")
                if r[1] == -1:
                    return "\n".join(got).rstrip("\n")
                continue
            shown = res.content[:m.start()].split("\n")[:-1]  # the last line shown may be cut: read it again
            if not shown:
                raise Incomplete(f"a single line of {path} is longer than the CLI shows at once")
            got += shown
            start, total = r[0] + len(shown), int(m.group(2))
            step = step or len(shown)
            break


def _read_back_bash(path: str, ctx: Ctx) -> Agent:
    """Where ``view`` is not offered (``--agent codeact``): ``sed -n 'A,Bp'`` chunks through bash, one a turn."""
    got: list[str] = []
    start = 1
    while True:
        end = start + SHELL_CHUNK_LINES - 1
        results = yield tc("bash", command=f"sed -n '{start},{end}p' {path}", description="Read the saved output")
        ctx.spill_calls += 1
        if _SPILL.match(results[0].content):
            raise Incomplete("a chunk of the saved output is itself too large for the CLI's window")
        chunk = bash_output(results[0].content).split("\n")
        if chunk and chunk[-1] == "":
            chunk.pop()
        got += chunk
        if len(chunk) < SHELL_CHUNK_LINES:
            return "\n".join(got)
        start = end + 1


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


_STATUS = re.compile(r"^codeact: (waiting for MCP server|discovering|not starting|warning:)")


def codeact_agent(program: str, parse: Callable[[str], Any], needs: Sequence[str] = ()) -> Callable[[Ctx], Agent]:
    """One bash call of the launcher with ``program``. ``needs``: sandbox tools the program calls that the model
    must have been told about; when the system prompt it received does not give their signatures (instructions that
    list MCP tools by name only, or not at all), the model first lists them with ``codeact tools [SERVER]`` — one
    more turn."""
    def agent(ctx: Ctx) -> Agent:
        unknown = [n for n in needs if f"{n}(" not in ctx.system]  # no signature in the system prompt
        if unknown:
            ctx.discovery = True
            servers = sorted({n.split(".")[0] for n in unknown})
            # instructions that offer `codeact tools [SERVER]` get the shorter, per-server listing
            command = f"{LAUNCHER} tools" + (f" {servers[0]}" if len(servers) == 1 and "tools [SERVER]" in ctx.system
                                             else "")
            listing = yield tc("bash", command=command, description="List the CodeAct sandbox tools")
            shown = bash_output(listing[0].content)
            if missing := [n for n in unknown if f"{n}(" not in shown]:
                raise RuntimeError(f"`codeact tools` does not list {missing}")
        results = yield tc("bash", command=heredoc(program), description="Run a CodeAct program")
        # the launcher's status lines on stderr (``codeact: waiting for MCP server 'demo' to start ...`` under
        # load) reach the model too: charged like all output, skipped when reading the answer, as a model would
        out = "\n".join(ln for ln in bash_output(results[0].content).split("\n") if not _STATUS.match(ln))
        try:
            return parse(out)
        except Exception as err:  # noqa: BLE001 - name what the program printed
            raise RuntimeError(f"could not read the program's output ({err!r}):\n{out[:2000]}") from err
    return agent


MAX_PARALLEL = 16  # parallel tool calls a turn, at most: what capable models issue, not the CLI's limit


@dataclass
class Ctx:
    repo: Path
    max_parallel: int | None = MAX_PARALLEL
    system: str = ""  # the system prompt of the first request: what the model was told before its first move
    tools: tuple[str, ...] = ()  # the tools the CLI offered in the first request
    discovery: bool = False  # whether the CodeAct replay had to list the sandbox's tools first
    spills: int = 0  # tool results the CLI saved to a file (past its inline window) that had to be read back
    spill_calls: int = 0  # the tool calls that reading them back took

    def abs(self, rel: str) -> str:
        return str(self.repo / rel)  # the CLI's view wants absolute paths


# ====================================================================================== what the CLI reports
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


