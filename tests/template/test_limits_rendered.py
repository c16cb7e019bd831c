"""The limits the stamped instructions and skill state are the runtime's own (core.limits.Limits.described), rendered
at stamp time: no figure is typed in the template."""
from __future__ import annotations

import re
from pathlib import Path

from codeact.core.limits import Limits

TEMPLATE = Path(__file__).resolve().parents[2] / "template"


def test_no_template_file_types_a_limit_figure() -> None:
    typed = re.compile(r"\b(30 s|256 MiB|16 KiB|1 MiB|10,000 tool calls)\b")
    hits = [f"{p.relative_to(TEMPLATE)}: {m.group(0)}" for p in TEMPLATE.rglob("*.jinja") if p.is_file()
            for m in typed.finditer(p.read_text(encoding="utf-8"))]
    assert hits == []


def test_the_stamped_instructions_and_skill_state_the_runtimes_limits(stamp) -> None:
    repo = stamp()
    limits = Limits().described()
    instructions = (repo / ".github/instructions/codeact.instructions.md").read_text(encoding="utf-8")
    assert f"limits {limits['timeout']}, {limits['memory']}, {limits['output']} of output" in instructions
    shown = "\n".join(p.read_text(encoding="utf-8") for p in (repo / ".github/skills").rglob("*.md"))
    assert (f"{limits['timeout']} wall time (`--timeout`), {limits['memory']} memory, {limits['tool_calls']} tool "
            f"calls, {limits['output']} of printed output") in shown
    assert f"the {limits['tool_result']} result limit" in instructions + shown
