"""The README's figure as an SVG bar chart: ~tokens per task, the strongest baseline against CodeAct, drawn from the
stored headline table (no plotting library: a few rectangles and labels)."""
from __future__ import annotations

import re
from html import escape

ROW = re.compile(r"^\| (?P<task>[^|]+?) \| [^|]+ \| [^|]+ \| [^|]+ \| (?P<base>[\d,]+) → (?P<codeact>[\d,]+) \|")
BAR_H, GAP, LABEL_W, CHART_W = 11, 8, 330, 420


def rows(headline: str) -> list[tuple[str, int, int]]:
    """(task, baseline ~tokens, CodeAct ~tokens) for each row of the headline table."""
    found = []
    for line in headline.splitlines():
        match = ROW.match(line)
        if match:
            found.append((match["task"].strip(), int(match["base"].replace(",", "")),
                          int(match["codeact"].replace(",", ""))))
    return found


def svg(data: list[tuple[str, int, int]]) -> str:
    """Two bars a task (grey: the strongest baseline; blue: CodeAct), scaled to the largest value."""
    top = max((max(base, codeact) for _, base, codeact in data), default=1)
    height = 40 + len(data) * (2 * BAR_H + GAP)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + CHART_W + 90}" height="{height}" '
             'font-family="sans-serif" font-size="11">',
             '<rect x="0" y="0" width="100%" height="100%" fill="white"/>',
             f'<rect x="{LABEL_W}" y="6" width="10" height="10" fill="#9e9e9e"/>'
             f'<text x="{LABEL_W + 14}" y="15">strongest baseline</text>',
             f'<rect x="{LABEL_W + 140}" y="6" width="10" height="10" fill="#1f6feb"/>'
             f'<text x="{LABEL_W + 154}" y="15">CodeAct</text>']
    y = 28
    for task, base, codeact in data:
        parts.append(f'<text x="{LABEL_W - 6}" y="{y + BAR_H + 3}" text-anchor="end">{escape(task)}</text>')
        for value, colour in ((base, "#9e9e9e"), (codeact, "#1f6feb")):
            width = max(1, round(CHART_W * value / top))
            parts.append(f'<rect x="{LABEL_W}" y="{y}" width="{width}" height="{BAR_H - 1}" fill="{colour}"/>'
                         f'<text x="{LABEL_W + width + 4}" y="{y + BAR_H - 2}">{value:,}</text>')
            y += BAR_H
        y += GAP
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
