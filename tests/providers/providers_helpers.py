"""Shared constants and builders of the live-provider tests (imported by name: pytest puts this folder on sys.path)."""
from __future__ import annotations

from typing import Any

TOKEN = "t" * 43
RESERVED = ("view", "grep", "github")  # a built-in or two and an MCP server's namespace


def tool(name: str, description: str = "", **properties: Any) -> dict[str, Any]:
    """A tool entry of hello with string-typed ``properties`` unless given as schemas."""
    props = {k: (v if isinstance(v, dict) else {"type": v}) for k, v in properties.items()}
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": props, "required": sorted(props)}}
