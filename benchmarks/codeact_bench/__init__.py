"""The parts of ``benchmarks/bench_codeact_vs_baseline.py`` (run that file; see benchmarks/README.md).

- ``workspace``: the seeded monorepo the tasks run in;
- ``replay``: the scripted model's side — token estimate, the CLI's tool-result formats (count summaries, results
  spilled past the inline window and read back), strategies as generators, at most 16 parallel calls a turn;
- ``task``: what a task is, the baselines' names, the edit check and restore;
- ``tasks``: the six original tasks — ground truth, the three baselines, CodeAct program, answer; all tasks in
  ``TASKS``; ``tasks_more``: issue 18's four (rename, two-hop MCP, find-then-inspect, not-for-CodeAct);
- ``session``: stamping the workspace, one ``copilot -p`` session and its figures, the always-on context;
- ``report``: the strongest baseline per task, ratios against every baseline, verdicts in words, the Markdown.
"""
