"""The parts of ``benchmarks/bench_codeact_vs_baseline.py`` (run that file; see benchmarks/README.md).

- ``workspace``: the seeded monorepo the tasks run in;
- ``replay``: the scripted model's side — token estimate, the CLI's tool-result formats, strategies as generators;
- ``tasks``: each task's ground truth, baseline strategy, CodeAct program and answer;
- ``session``: stamping the workspace, one ``copilot -p`` session and its figures, the always-on context;
- ``report``: ratios, targets, the Markdown tables.
"""
