"""Ratios, targets and the Markdown tables, from the report dictionary the benchmark writes as JSON."""
from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from tests.copilot.conftest import COPILOT_VERSION

from .session import CODEACT_STRATEGIES, Session
from .task import BASELINE_DOC, BASELINES
from .tasks import Task

LABEL = "scripted replay"
TARGET_TASK_BYTES = 0.10  # CODEACT task bytes <= 10% of the STRONGEST baseline on every multi-step task
TARGET_REQUESTS = 0.50  # CODEACT model requests <= 50% of the strongest baseline
RATIO_KEYS = ("task_bytes", "requests", "input_bytes", "peak_bytes", "task_tokens", "input_tokens", "output_tokens",
              "output_bytes", "tool_calls", "wall_s")


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


def cost(s: Session | dict[str, Any]) -> int:
    """What a session costs the model, as one number: ~input tokens + ~output tokens (no price weighting)."""
    d = s if isinstance(s, dict) else s.__dict__
    return int(d["input_tokens"] + d["output_tokens"])


TIE = 0.005  # ~tokens within 0.5% of the lowest count as equal (the same moves differ by a few path bytes)


def strongest(sessions: list[Any], task: str) -> Any | None:
    """The task's strongest baseline: the fewest ~input + ~output tokens (within ``TIE``), then the fewest
    requests, then the order of ``BASELINES``."""
    base = [s for s in sessions if _get(s, "task") == task and _get(s, "strategy") in BASELINES]
    if not base:
        return None
    low = min(cost(s) for s in base)
    near = [s for s in base if cost(s) <= low * (1 + TIE)]
    return min(near, key=lambda s: (_get(s, "requests"), BASELINES.index(_get(s, "strategy"))))


def _get(s: Any, key: str) -> Any:
    return s[key] if isinstance(s, dict) else getattr(s, key)


def summarize(sessions: list[Session], tasks: list[Task]) -> list[dict[str, Any]]:
    """Every CodeAct strategy against every baseline, per task, each figure as a ratio; ``against`` names the
    baseline and ``best_baseline`` marks the task's strongest one (``strongest``).

    A task is multi-step when its strongest baseline needed two or more turns of tool calls (a call that needed an
    earlier call's result): the chains CodeAct collapses. The targets are judged there, against that baseline."""
    by = {(s.task, s.strategy): s for s in sessions}
    out = []
    for t in tasks:
        best = strongest(sessions, t.name)
        chain = best is not None and best.tool_turns >= 2
        for against in [b for b in BASELINES if (t.name, b) in by]:
            base = by[(t.name, against)]
            for strategy in CODEACT_STRATEGIES:
                s = by.get((t.name, strategy))
                if s is None:
                    continue
                row: dict[str, Any] = {"task": t.name, "strategy": strategy, "against": against,
                                       "best_baseline": base is best, "multi_step": chain,
                                       "instructions_advise_codeact": t.multi_step,
                                       "baseline_tool_turns": base.tool_turns}
                row |= {f"{k.removesuffix('_s')}_ratio": ratio(getattr(s, k), getattr(base, k)) for k in RATIO_KEYS}
                row["cost_ratio"] = ratio(cost(s), cost(base))
                if chain and base is best:
                    row["task_bytes_target_met"] = row["task_bytes_ratio"] is not None and \
                        row["task_bytes_ratio"] <= TARGET_TASK_BYTES
                    row["requests_target_met"] = row["requests_ratio"] is not None and \
                        row["requests_ratio"] <= TARGET_REQUESTS
                out.append(row)
    return out


def verdicts(sessions: list[Any], tasks: list[Any]) -> list[dict[str, Any]]:
    """Per task, in words: which strategy wins (the fewest ~tokens, input + output) and why, from the figures."""
    out = []
    for t in tasks:
        name = _get(t, "name")
        mine = [s for s in sessions if _get(s, "task") == name]
        best, c = strongest(mine, name), next((s for s in mine if _get(s, "strategy") == "codeact"), None)
        if best is None or c is None:
            continue
        b = best if isinstance(best, dict) else best.__dict__
        c = c if isinstance(c, dict) else c.__dict__
        winner = "codeact" if cost(c) < cost(b) else b["strategy"]
        why = []
        if b["tool_turns"] >= 2:
            why.append(f"{b['strategy']} needs {b['tool_turns']} turns of tool calls ({b['tool_calls']} calls, "
                       f"{b['requests']} requests, each re-sending the whole context) where CodeAct runs one program "
                       f"({c['requests']} requests)")
        else:
            why.append(f"{b['strategy']} answers with one turn of {b['tool_calls']} tool call(s) ({b['requests']} "
                       f"requests), so there is no chain for CodeAct to collapse")
        if b.get("spills"):
            why.append(f"{b['spills']} of its results passed the CLI's 20 KiB inline window and were read back from "
                       f"the saved file ({b['spill_calls']} more calls)")
        tb, tc_ = b["task_bytes"], c["task_bytes"]
        rel = "more" if tc_ > tb else "fewer"
        why.append(f"CodeAct carries {_kb(abs(tc_ - tb))} KB {rel} task bytes ({_kb(tc_)} vs {_kb(tb)} KB) and "
                   f"generates {c['output_tokens']:,} vs {b['output_tokens']:,} ~output tokens (its program is "
                   f"{c['program_bytes']:,} bytes)")
        margin = ratio(cost(c), cost(b))
        sentence = (f"**{winner}** wins ({'CodeAct' if winner == 'codeact' else 'the baseline'} at "
                    f"{_pct(margin if winner == 'codeact' else ratio(cost(b), cost(c)))} of the other's ~tokens): "
                    + "; ".join(why) + ".")
        if _tie(margin):
            sentence += " Within 3%: a tie in practice."
        agent = next((s for s in mine if _get(s, "strategy") == "codeact-agent"), None)
        if agent is not None:
            sentence += (f" Under `--agent codeact` (bash only) the same program costs "
                         f"{_pct(ratio(cost(agent if isinstance(agent, dict) else agent.__dict__), cost(b)))} of "
                         f"{b['strategy']}'s ~tokens; that is mostly the smaller fixed prefix, which any bash-only "
                         "agent gets (a shell one-liner too).")
        if not _get(t, "multi_step"):
            sentence += (" The stamped instructions say not to use CodeAct here (a single read or edit); the figures "
                         "show what ignoring them costs.")
        out.append({"task": name, "winner": winner, "strongest_baseline": b["strategy"], "cost_ratio": margin,
                    "text": sentence})
    return out


def payback(sessions: list[Session], tasks: list[Task], always_on_bytes: int) -> list[dict[str, Any]]:
    """Per task: does CodeAct save more task bytes than the always-on context costs over its session
    (always-on bytes x the CodeAct session's requests), against the task's strongest baseline?"""
    by = {(s.task, s.strategy): s for s in sessions}
    out = []
    for t in tasks:
        b, c = strongest(sessions, t.name), by.get((t.name, "codeact"))
        if b and c:
            cost_, saved = always_on_bytes * c.requests, b.task_bytes - c.task_bytes
            out.append({"task": t.name, "against": b.strategy, "multi_step": b.tool_turns >= 2,
                        "codeact_requests": c.requests, "cost_bytes": cost_, "saved_task_bytes": saved,
                        "paid_back": saved >= cost_})
    return out


def _kb(n: int) -> str:
    return f"{n / 1000:,.1f}"


def _pct(r: float | None) -> str:
    return "—" if r is None else f"{100 * r:.0f}%" if r >= 0.1 else f"{100 * r:.1f}%"


def headline(report: dict[str, Any]) -> str:
    """The short table for a README: CodeAct against each task's strongest baseline, the tasks it loses included."""
    titles = {t["name"]: t["title"] for t in report["tasks"]}
    by = {(s["task"], s["strategy"]): s for s in report["sessions"]}
    words = {v["task"]: v for v in report.get("verdicts", [])}
    lines = ["| task | strongest baseline | requests | task KB | ~tokens (in + out) | CodeAct / baseline | winner |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in report["ratios"]:
        if r["strategy"] != "codeact" or not r["best_baseline"]:
            continue
        b, c = by[(r["task"], r["against"])], by[(r["task"], "codeact")]
        lines.append(f"| {titles[r['task']]} | {r['against']} | {b['requests']} → {c['requests']} | "
                     f"{_kb(b['task_bytes'])} → {_kb(c['task_bytes'])} | {cost(b):,} → {cost(c):,} | "
                     f"{_pct(r['cost_ratio'])} | {words.get(r['task'], {}).get('winner', '—')}"
                     f"{' (tie: within 3%)' if _tie(r['cost_ratio']) else ''} |")
    wins = [v for v in words.values() if v["winner"] == "codeact"]
    clear = sum(1 for v in wins if not _tie(v["cost_ratio"]))
    losses = sum(1 for v in words.values() if v["winner"] != "codeact" and not _tie(v["cost_ratio"]))
    setting = ""
    if report.get("enforcement", "off") != "off" and report.get("context"):
        setting = (f"; {len(report['mcp_servers'])} MCP servers configured: the baselines run as a user without "
                   f"CodeAct and are offered {report['context'][0]['mcp_tools']} MCP tools, CodeAct runs in "
                   f"{report['enforcement']} mode with the default agent")
    return (f"CodeAct against the strongest of three scripted baselines per task (real Copilot CLI "
            f"{report['machine']['copilot_cli']}, scripted model{setting}; {report['generated']}): on ~tokens (input + "
            f"output) CodeAct wins {clear} of {len(words)} tasks by more than 3%, loses {losses} by more than 3%, "
            f"and ties the rest. Arrows: baseline → CodeAct.\n\n" + "\n".join(lines) + "\n")


def _tie(r: float | None) -> bool:
    return r is not None and abs(r - 1) < 0.03


def markdown(report: dict[str, Any]) -> str:
    sessions = report["sessions"]
    titles = {t["name"]: t["title"] for t in report["tasks"]}
    m = report["machine"]
    best = {r["task"]: r["against"] for r in report["ratios"] if r["best_baseline"]}
    lines = [f"### CodeAct vs the CLI's own tools — {LABEL}", "",
             f"Generated by `{report['command']}` on {report['generated']}. Copilot CLI {m['copilot_cli']} offline, "
             "the model's moves scripted (tests/copilot/mock_model.py), every answer computed from the tool results "
             f"the model received and checked against the ground truth. Machine: {m['cpu']}, {m['cores']} cores, "
             f"{m['memory']}, {m['os']}, Python {m['python']}. Workspace: {report['workspace']['files']} files, "
             f"{_kb(report['workspace']['bytes'])} KB, seed {report['seed']}. Tokens (~): {report['estimator']}. "
             "KB = 1,000 bytes.", "",
             "Strategies: " + "; ".join(f"`{k}`: {v}" for k, v in BASELINE_DOC.items()) + "; `codeact`: one bash call "
             "of `.codeact/bin/codeact run` with the program; `codeact-agent`: the same under `--agent codeact` "
             f"(bash only). Every baseline issues at most {report.get('max_parallel', 16)} parallel calls a turn. A "
             "tool result past the CLI's 20 KiB inline window is saved to a file; the strategy then reads it back "
             "(view_range chunks) and those calls are charged to it. The **strongest baseline** of a task is the "
             "one with the fewest ~tokens (input + output).", "",
             "#### Headline: CodeAct against the strongest baseline, per task", "", headline(report).split("\n\n", 1)[1],
             "#### Who wins each task, and why", ""]
    lines += [f"- {titles[v['task']]}: {v['text']}" for v in report.get("verdicts", [])]
    if reruns := sum(s.get("mcp_reruns", 0) for s in sessions):
        lines += ["", f"{reruns} session(s) were run again because the CLI failed to connect an MCP server in "
                      "them (the figures are those of the session that connected every server)."]
    lines += ["", "#### Every session", "",
              "| task | strategy | requests | tool calls | turns | input KB | task KB | peak KB | ~input tokens "
              "| ~output tokens | wall s | spilled |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in sessions:
        mark = " (strongest)" if best.get(s["task"]) == s["strategy"] else ""
        lines.append(f"| {titles[s['task']]} | {s['strategy']}{mark} | {s['requests']} | {s['tool_calls']} | "
                     f"{s['tool_turns']} | {_kb(s['input_bytes'])} | {_kb(s['task_bytes'])} | {_kb(s['peak_bytes'])} "
                     f"| {s['input_tokens']:,} | {s['output_tokens']:,} | {s['wall_s']:.1f} | "
                     f"{s.get('spills', 0) or ''} |")
    lines += ["", "#### Every figure as a ratio, CodeAct / each baseline (one run)", "",
              "| task | strategy | against | ~tokens | task bytes | input bytes | peak | ~output tokens | requests "
              "| tool calls | wall |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in report["ratios"]:
        against = f"**{r['against']}**" if r["best_baseline"] else r["against"]
        lines.append(f"| {titles[r['task']]} | {r['strategy']} | {against} | " + " | ".join(
            _pct(r[k]) for k in ("cost_ratio", "task_bytes_ratio", "input_bytes_ratio", "peak_bytes_ratio",
                                 "output_tokens_ratio", "requests_ratio", "tool_calls_ratio", "wall_ratio")) + " |")
    lines += ["", "Bold: the task's strongest baseline. Wall time is the copilot process from start to exit on a "
                  "2-core machine shared with other work while this ran: differences under ~1 s are noise."]
    spilled = [f"{titles[s['task']]} / {s['strategy']} ({s['spills']}, read back in {s['spill_calls']} calls)"
               for s in sessions if s.get("spills")]
    lines += ["", "Results past the CLI's 20 KiB inline window, saved to a file and read back (charged above): "
                  + ("; ".join(spilled) + "." if spilled else "none in this run — every strategy's output stayed "
                     "inline (the read-back is exercised by tests/benchmarks/test_bench_smoke.py).")]
    compacted = [f"{titles[s['task']]} / {s['strategy']} ({s['compactions']})" for s in sessions if s["compactions"]]
    if compacted:
        lines += ["", "The CLI compacted the context (a background request carrying the whole conversation, counted "
                      "above) in: " + "; ".join(compacted) + "."]
    notes = sorted({titles[s["task"]] for s in sessions if s.get("discovery_turn")})
    if notes:
        lines += ["", f"CodeAct listed the sandbox's tools first (`codeact tools`, one more request) on: "
                      f"{'; '.join(notes)} — the system prompt did not name the MCP tools it needed."]
    lines += ["", f"Targets (issue 8), judged against each task's STRONGEST baseline: task bytes ≤ "
                  f"{TARGET_TASK_BYTES:.0%} and model requests ≤ {TARGET_REQUESTS:.0%} on every multi-step task — one "
                  "where that baseline needs two or more turns of tool calls. CodeAct needs 2 requests (its call, "
                  "then the answer), so against a 2-turn chain (3 requests) its floor is 67%.", "",
              "| task | strongest baseline | its turns of tool calls | task bytes | requests |", "|---|---|---:|---:|---:|"]
    lines += _target_rows(report, titles)
    lines += _always_on_section(report.get("always_on"), titles)
    of = report.get("output_formats")
    if of:
        lines += ["", "How the program hands back its answer matters (the TODO answer, bytes of output; launcher only, "
                      "no CLI):", "", "| output | bytes |", "|---|---:|",
                  f"| printed compact lines (the benchmark's program) | {of['printed_lines']:,} |",
                  f"| the same data as the last expression, as the runtime prints it (one line of JSON) | "
                  f"{of['last_expression']:,} |",
                  f"| that JSON without the spaces after `,` and `:` | {of['last_expression_no_spaces']:,} |"]
    return "\n".join(lines) + "\n"


def _target_rows(report: dict[str, Any], titles: dict[str, str]) -> list[str]:
    """The targets table's rows: CodeAct against each task's strongest baseline."""
    lines: list[str] = []
    for r in report["ratios"]:
        if r["strategy"] != "codeact" or not r["best_baseline"]:
            continue
        def judged(key: str, met: str) -> str:
            if not r["multi_step"]:
                return f"{_pct(r[key])} (n/a: one step)"
            return f"{_pct(r[key])} {'met' if r.get(met) else '**missed**'}"
        lines.append(f"| {titles[r['task']]} | {r['against']} | {r['baseline_tool_turns']} | "
                     f"{judged('task_bytes_ratio', 'task_bytes_target_met')} | "
                     f"{judged('requests_ratio', 'requests_target_met')} |")
    return lines


def _always_on_section(ao: dict[str, Any] | None, titles: dict[str, str]) -> list[str]:
    """The always-on context against the MCP schemas it keeps out, and whether it pays back per task."""
    if not ao:
        return []
    lines: list[str] = []
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
        lines += ["", f"Paid back? Per task — always-on bytes ({ao['payback_bytes']:,}, {ao['payback_basis']}) × "
                      "CodeAct requests, against the task bytes CodeAct saved over the strongest baseline:", "",
                  "| task | against | multi-step | always-on cost | task bytes saved | paid back |",
                  "|---|---|---|---:|---:|---|"]
        lines += [f"| {titles[p['task']]} | {p['against']} | {'yes' if p.get('multi_step') else 'no'} | "
                  f"{p['cost_bytes']:,} | {p['saved_task_bytes']:,} | {'yes' if p['paid_back'] else '**no**'} |"
                  for p in pbs]
    return lines


def live_markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    multi = [r for r in rows if r["should_use_codeact"]]
    single = [r for r in rows if not r["should_use_codeact"]]
    lines = [f"### Live run — model {report['model']}{', agent ' + report['agent'] if report['agent'] else ''}", "",
             f"Generated by `{report['command']}` on {report['generated']}. The model chose CodeAct on "
             f"{sum(r['chose_codeact'] for r in multi)} of {len(multi)} multi-step tasks (where the instructions say "
             f"it should)" + (f" and on {sum(r['chose_codeact'] for r in single)} of {len(single)} tasks where they "
                              "say it should not (a single read or edit)" if single else "") + ".", "",
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
