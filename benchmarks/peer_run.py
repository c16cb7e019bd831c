"""One peer CodeAct implementation running a program with three small tools (view, grep, echo), in its own venv.

    python peer_run.py afm|pah trivial             # one trivial run (whole process = the start-up figure)
    python peer_run.py afm|pah calls FILE N ROUNDS # per view call: N calls minus the same loop over a local function

``afm`` is agent-framework-monty's ``MontyExecuteCodeTool``; ``pah`` is pydantic-ai-harness's ``CodeMode`` on an
``Agent`` whose ``FunctionModel`` calls ``run_code`` once (no network). Both expose tools as async functions. The
``calls`` mode prints ``{"view_us": ..., "view_cpu_us": ...}`` (medians of ROUNDS interleaved rounds).
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def view(path: str) -> str:
    """Return a file's text."""
    with open(path, encoding="utf-8") as f:
        return f.read()


def grep(pattern: str, path: str) -> list[str]:
    """Lines matching ``pattern`` in the files under ``path``, as ``file:line:text``."""
    regex, out = re.compile(pattern), []
    for folder, _, names in os.walk(path):
        for name in sorted(names):
            full = os.path.join(folder, name)
            with open(full, encoding="utf-8", errors="replace") as f:
                out += [f"{full}:{i}:{line.rstrip()}" for i, line in enumerate(f, 1) if regex.search(line)]
    return out


def echo(text: str) -> str:
    """Return the text."""
    return text


def afm_runner() -> Callable[[str], Any]:
    from agent_framework_monty import MontyExecuteCodeTool

    tool = MontyExecuteCodeTool(tools=[view, grep, echo], resource_limits={"max_duration_secs": 120, "max_suspensions": 10_000_000})
    def run(code: str) -> Any:
        contents = asyncio.run(tool.invoke(arguments={"code": code}))
        texts = [getattr(c, "text", None) for c in contents]
        if any(getattr(c, "type", "") == "error" for c in contents):
            raise RuntimeError(f"agent-framework-monty: {[getattr(c, 'error_details', c) for c in contents]}")
        return " ".join(str(t) for t in texts)

    return run


def pah_runner() -> Callable[[str], Any]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai_harness import CodeMode

    program = {"code": "1"}

    def model(messages: list[Any], _info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": program["code"]})])
        return ModelResponse(parts=[TextPart(str(messages[-1].parts[0].content)[:200])])

    # its default max_suspensions (1,000, cumulative) would stop a 2,000-call program at ~500 calls
    agent = Agent(FunctionModel(model), capabilities=[CodeMode(
        max_tool_calls=1_000_000, resource_limits={"max_duration_secs": 120, "max_suspensions": 10_000_000})])
    for fn in (view, grep, echo):
        agent.tool_plain(fn)

    def run(code: str) -> Any:
        program["code"] = code
        return agent.run_sync("run the program").output

    return run


def checked(output: Any, want: str) -> None:
    """Stop unless the program's output is its whole answer (every call made): a peer stopped early by one of its
    limits must not pass for a fast one."""
    if re.search(rf"\b{want}\b", str(output)) is None:
        raise SystemExit(f"the peer's program did not give its whole answer {want}: {str(output)[:300]!r}")


def main() -> int:
    kind, mode = sys.argv[1], sys.argv[2]
    run = afm_runner() if kind == "afm" else pah_runner()
    if mode == "trivial":
        print(run("1"))
        return 0
    path, calls, rounds = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    loop = "n = 0\nfor i in range({n}):\n    n += len({call})\nn"
    with_tool = loop.format(n=calls, call=f"await view(path={path!r})")
    local = "async def same(path):\n    return 'x' * 30\n" + loop.format(n=calls, call=f"await same(path={path!r})")
    want_tool, want_local = str(calls * len(view(path))), str(calls * 30)
    checked(run(with_tool), want_tool)  # warm
    walls, cpus = [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        got_tool = run(with_tool)
        c1, t1 = time.process_time(), time.perf_counter()
        got_local = run(local)
        c2, t2 = time.process_time(), time.perf_counter()
        checked(got_tool, want_tool)
        checked(got_local, want_local)
        walls.append((t1 - t0) - (t2 - t1))
        cpus.append((c1 - c0) - (c2 - c1))
    print(json.dumps({"view_us": statistics.median(walls) * 1e6 / calls,
                      "view_cpu_us": statistics.median(cpus) * 1e6 / calls}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
