"""Tools the sandbox offers: the built-in ones (their catalog: codeact.core.catalog), the user's own
(codeact.tools.user) and the set a run offers (codeact.tools.assemble).

``Tool`` and ``ToolContext`` are re-exported here: a user tool imports them as ``from codeact.tools import ...``.
"""
from __future__ import annotations

from ..core.tool import Tool, ToolContext, tool_from_function

__all__ = ["Tool", "ToolContext", "tool_from_function"]
