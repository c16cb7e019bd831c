"""MCP results as the program sees them: plain data (structured content, text, or one dict per content block)."""
from __future__ import annotations

import base64
from typing import Any

from .sessions import ToolCallError

NOT_SUPPORTED = {"Sampling not supported": "sampling (it asked the client's model to write text)",
                 "Elicitation not supported": "elicitation (it asked the user a question)"}


def result_value(result: Any, *, unwrap: bool = False, label: str = "tool") -> Any:
    """A ``CallToolResult`` as the program sees it, as plain data.

    Structured content, if present, as data (``unwrap`` returns ``structured["result"]`` for the SDK's wrapped
    primitive results, ``{"result": 3}``). Else, when every item is text (or an embedded text resource), the text.
    Else a list with one dict per item: ``{"type": "text", "text"}``, ``{"type": "image"|"audio", "mime_type",
    "data"}`` (base64), ``{"type": "resource", "uri", "mime_type", "text"|"blob"}`` (blob: base64) and
    ``{"type": "resource_link", "uri", "name", "mime_type", "description"}`` (read it with ``mcp_resource``).
    A result flagged ``isError`` raises :class:`ToolCallError` with the server's text.
    """
    if result.is_error:
        raise ToolCallError(f"{label} failed: {not_supported(_text(result.content)) or 'the server reported an error'}")
    data = result.structured_content
    if data is not None:
        if unwrap and isinstance(data, dict) and set(data) == {"result"}:
            return data["result"]
        return data
    items = [content_item(item) for item in result.content or []]
    if all(i["type"] == "text" or (i["type"] == "resource" and "text" in i) for i in items):
        return "\n".join(i["text"] for i in items)
    return items


def content_item(item: Any) -> dict[str, Any]:
    """One MCP content block (or resource contents) as a plain dict (binary data stays base64 text)."""
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": item.text}
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": getattr(item, "mime_type", None), "data": getattr(item, "data", "")}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": str(item.uri), "name": getattr(item, "name", None),
                "mime_type": getattr(item, "mime_type", None), "description": getattr(item, "description", None)}
    if kind == "resource":
        return {"type": "resource", **resource_contents(item.resource)}
    return {"type": str(kind or "unknown"), "value": item.model_dump(mode="json") if hasattr(item, "model_dump")
            else str(item)}


def resource_contents(contents: Any) -> dict[str, Any]:
    """``TextResourceContents`` / ``BlobResourceContents`` as ``{"uri", "mime_type", "text" | "blob"}``."""
    out: dict[str, Any] = {"uri": str(contents.uri), "mime_type": getattr(contents, "mime_type", None)}
    if hasattr(contents, "text"):
        out["text"] = contents.text
    else:
        blob = getattr(contents, "blob", "")
        out["blob"] = blob if isinstance(blob, str) else base64.b64encode(blob).decode("ascii")
    return out


def not_supported(text: str) -> str:
    """A server's error text, with the SDK's "Sampling/Elicitation not supported" made plain for the model."""
    for marker, what in NOT_SUPPORTED.items():
        if marker in text:
            return f"the server needs {what}, which is not supported by CodeAct; its other tools still work " \
                   f"({text.strip()})"
    return text


def _text(content: list[Any]) -> str:
    parts = []
    for item in content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource" and hasattr(getattr(item, "resource", None), "text"):
            parts.append(item.resource.text)
    return "\n".join(parts)


__all__ = ["content_item", "not_supported", "resource_contents", "result_value"]
