"""``codeact search QUERY``: the tools whose names and descriptions match, best first (read-only, starts nothing).

The always-on instructions name the MCP servers and, within a byte budget, their tools; the rest is found here on
demand. Every word of the query is matched case-insensitively against each tool's name (``server.tool``, Python
and real names, split at ``.``, ``_``, ``-``) and its description. Per word: an exact name part scores 8, a part of
the name 5, a whole word of the description 3, a part of it 1. Tools matching more words rank first, then the
higher score, then the name.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.tool import Tool

_WORD = re.compile(r"[0-9A-Za-z]+")


@dataclass(frozen=True)
class Hit:
    """One tool that matched, with how well."""

    tool: Tool
    matched: int  # how many words of the query it matched
    score: int


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (letters and digits)."""
    return [w.lower() for w in _WORD.findall(text or "")]


def full_description(tool: Tool) -> str:
    """The tool's description: for an MCP tool, the server's whole text (the first paragraph of its doc)."""
    if tool.source == "mcp" and tool.doc:
        return tool.doc.split("\n\n", 1)[0]
    return tool.description


def search(tools: Iterable[Tool], query: str, *, limit: int | None = None) -> list[Hit]:
    """The tools matching ``query``, best first (at most ``limit``)."""
    wanted = list(dict.fromkeys(words(query)))
    hits = []
    for tool in tools:
        names = f"{tool.name} {tool.original_name or ''}".lower()
        name_parts = set(words(names.replace("_", " ")))
        description = full_description(tool).lower()
        description_words = set(words(description))
        matched = score = 0
        for word in wanted:
            gain = (8 if word in name_parts else 5 if word in names else 0) \
                + (3 if word in description_words else 1 if word in description else 0)
            if gain:
                matched += 1
                score += gain
        if matched:
            hits.append(Hit(tool, matched, score))
    hits.sort(key=lambda h: (-h.matched, -h.score, h.tool.name))
    return hits[:limit] if limit else hits


__all__ = ["Hit", "full_description", "search", "words"]
