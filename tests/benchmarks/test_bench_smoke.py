"""Smoke test of benchmarks/bench_codeact_vs_baseline.py: one task, both strategies, through the real Copilot CLI.

A small workspace (3 packages, no MCP server), the "validate every JSON config" task: the baseline globs and views
every config in one turn of parallel calls, CodeAct runs one program; both answers must equal the ground truth
computed from the files, and the figures must be the ones the benchmark defines.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_codeact_vs_baseline as bench
from tests.copilot.conftest import find_copilot

pytestmark = [pytest.mark.e2e,
              # bpe-openai (the token estimate) loads its vocabulary with a deprecated importlib API
              pytest.mark.filterwarnings("ignore:open_binary is deprecated:DeprecationWarning")]


def test_json_task_both_strategies_agree_with_the_truth(tmp_path: Path, venv_dir: Path) -> None:
    copilot, how = find_copilot()
    if copilot is None:
        pytest.skip(how)
    ws = bench.build_workspace(tmp_path, seed=10, packages=3, mcp=False, venv=venv_dir, copilot=copilot)
    task = bench.TASKS_BY_NAME["json"]
    truth = task.truth(ws.repo)
    assert truth["total"] == 9 and 0 < len(truth["invalid"]) < truth["total"], truth

    base, codeact = bench.run_pair(ws, task, ["baseline", "codeact"], bench.Estimator(), truth)

    assert base.answer_ok and codeact.answer_ok and base.final_sha256 == codeact.final_sha256
    # the baseline: a glob, then every config viewed in ONE turn; CodeAct: one bash call
    assert (base.requests, base.tool_calls, base.max_calls_per_turn) == (3, 1 + truth["total"], truth["total"])
    assert (codeact.requests, codeact.tool_calls) == (2, 1)
    assert base.cli_events["tools"] == {"glob": 1, "view": truth["total"]}
    assert codeact.cli_events["codeact_runs"] == 1 and base.cli_events["codeact_runs"] == 0
    for s in (base, codeact):
        assert s.input_bytes == sum(s.request_bytes) and s.peak_bytes == max(s.request_bytes)
        assert 0 < s.task_bytes == s.input_bytes - s.requests * s.fixed_bytes  # one fixed prefix per session here
        assert s.fixed_constant and s.fixed_bytes > 10_000
    assert codeact.task_bytes < base.task_bytes
    # a chain for the baseline (the views needed the glob's answer): a multi-step task, judged by the targets
    assert (base.tool_turns, codeact.tool_turns) == (2, 1)
    assert codeact.output_bytes > codeact.program_bytes > 0 and base.output_bytes > 0  # the program is generated
    (row,) = [r for r in bench.summarize([base, codeact], [task]) if r["strategy"] == "codeact"]
    assert row["multi_step"] and row["requests_ratio"] == round(2 / 3, 4) and "requests_target_met" in row
