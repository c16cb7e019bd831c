"""Prelude helpers for reading files with encodings and ``errors=`` (see codeact.core.prelude)."""
from __future__ import annotations

from typing import Any


# --------------------------------------------------------------------------------------------------- files
def codeact_is_utf8(encoding: Any) -> bool:
    return encoding is None or str(encoding).lower().replace("_", "-") in ("utf-8", "utf8", "u8", "utf-8-sig")


def codeact_decode(data: bytes, encoding: Any, errors: Any) -> str:
    """``data`` decoded as CPython's text mode would (universal newlines): Latin-1 by code point, the rest by the
    sandbox's own codecs (UTF-8, UTF-16, UTF-32, ASCII); any other encoding is a LookupError that says so, never a
    silent UTF-8 reading."""
    name = "utf-8" if encoding is None else str(encoding).lower().replace("_", "-")
    if name in ("latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1"):
        text = "".join([chr(b) for b in data])
    else:
        codec = "utf-8" if name == "utf-8-sig" else name
        boms = {"utf-16": (b"\xff\xfe", b"\xfe\xff"), "utf16": (b"\xff\xfe", b"\xfe\xff"),
                "utf-32": (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"),
                "utf32": (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")}.get(name)
        if boms is not None and data and data[:len(boms[0])] not in boms:  # as CPython's text mode: no guessed order
            # CPython raises UnicodeError, which the sandbox lacks: its subclass, which a program can catch here
            why = f"UTF-{name[-2:]} stream does not start with BOM (name the order: utf-{name[-2:]}-le or -be)"
            raise UnicodeDecodeError(why)  # type: ignore[call-arg]  # the sandbox's takes the message alone
        known = True
        text = ""
        try:
            text = data.decode(codec) if errors is None or errors == "strict" else data.decode(codec, errors)
        except LookupError:
            known = False
        if not known:
            raise LookupError(f"unknown encoding: {encoding} (the sandbox decodes UTF-8, UTF-16, UTF-32, ASCII and "
                              "Latin-1 only; read other text as bytes, open(path, 'rb'), and decode what you need)")
    if name == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def codeact_read_text(path: Any, encoding: Any = None, errors: Any = None, newline: Any = None) -> str:
    """``Path.read_text(encoding=..., errors=...)``."""
    if codeact_is_utf8(encoding) and encoding != "utf-8-sig" and errors in (None, "strict") and newline is None:
        return str(path.read_text())
    return codeact_decode(path.read_bytes(), encoding, errors)


class codeact_TextFile:
    """A file opened for reading text with ``errors=`` or another encoding: read whole, then served by line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.closed = False

    def read(self, size: int = -1) -> str:
        end = len(self.text) if size is None or size < 0 else self.at + size
        chunk = self.text[self.at:end]
        self.at = min(end, len(self.text))
        return chunk

    def readline(self, size: int = -1) -> str:
        end = self.text.find("\n", self.at)
        end = len(self.text) if end < 0 else end + 1
        if size is not None and size >= 0:
            end = min(end, self.at + size)
        chunk = self.text[self.at:end]
        self.at = end
        return chunk

    def readlines(self) -> list[str]:
        rest = self.text[self.at:]
        self.at = len(self.text)
        return rest.splitlines(True)

    def __iter__(self) -> Any:
        return iter(self.readlines())

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True


def codeact_open(file: Any, mode: str = "r", buffering: int = -1, encoding: Any = None, errors: Any = None,  # noqa: ARG001
             newline: Any = None) -> Any:  # noqa: ARG001 - open()'s signature
    """``open()`` with ``errors=`` or an encoding the sandbox refuses: the bytes read whole and decoded."""
    if "b" in mode or (codeact_is_utf8(encoding) and encoding != "utf-8-sig" and errors in (None, "strict")):
        if encoding is None:
            return open(file, mode)
        return open(file, mode, encoding="utf-8")
    with open(file, "rb") as handle:
        data = handle.read()
    return codeact_TextFile(codeact_decode(data, encoding, errors))
