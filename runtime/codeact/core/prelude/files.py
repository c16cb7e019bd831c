"""Prelude helpers for reading files with encodings and ``errors=`` (see codeact.core.prelude)."""
from __future__ import annotations

from typing import Any

# --------------------------------------------------------------------------------------------------- files
# The sandbox decodes these codecs; CPython's names for them (encodings.aliases, normalised) -> the codec.
# tests/runtime/test_prelude.py keeps the table equal to CPython's.
codeact_CODECS = {
    "646": "ascii", "8859": "latin_1", "ansi_x3.4_1968": "ascii", "ansi_x3.4_1986": "ascii",
    "ansi_x3_4_1968": "ascii", "ascii": "ascii", "cp367": "ascii", "cp65001": "utf_8", "cp819": "latin_1",
    "csascii": "ascii", "csisolatin1": "latin_1", "ibm367": "ascii", "ibm819": "latin_1", "iso646_us": "ascii",
    "iso8859": "latin_1", "iso8859_1": "latin_1", "iso_646.irv_1991": "ascii", "iso_8859_1": "latin_1",
    "iso_8859_1_1987": "latin_1", "iso_ir_100": "latin_1", "iso_ir_6": "ascii", "l1": "latin_1", "latin": "latin_1",
    "latin1": "latin_1", "latin_1": "latin_1", "u16": "utf_16", "u32": "utf_32", "u8": "utf_8",
    "unicodebigunmarked": "utf_16_be", "unicodelittleunmarked": "utf_16_le", "us": "ascii", "us_ascii": "ascii",
    "utf": "utf_8", "utf16": "utf_16", "utf32": "utf_32", "utf8": "utf_8", "utf8_ucs2": "utf_8",
    "utf8_ucs4": "utf_8", "utf_16": "utf_16", "utf_16_be": "utf_16_be", "utf_16_le": "utf_16_le",
    "utf_16be": "utf_16_be", "utf_16le": "utf_16_le", "utf_32": "utf_32", "utf_32_be": "utf_32_be",
    "utf_32_le": "utf_32_le", "utf_32be": "utf_32_be", "utf_32le": "utf_32_le", "utf_8": "utf_8",
    "utf_8_sig": "utf_8_sig"}


def codeact_codec(encoding: Any) -> str | None:
    """The codec ``encoding`` names as CPython's ``codecs.lookup`` finds it (``'UTF-8-SIG'``, ``'u16'``,
    ``'Latin 1'``), or None for one the sandbox does not decode."""
    chars: list[str] = []
    punct = False
    for c in str(encoding).lower():  # encodings.normalize_encoding
        if c.isalnum() or c == ".":
            if punct and chars:
                chars.append("_")
            if c.isascii():
                chars.append(c)
            punct = False
        else:
            punct = True
    name = "".join(chars)
    return codeact_CODECS.get(name) or codeact_CODECS.get(name.replace(".", "_"))


def codeact_is_utf8(encoding: Any) -> bool:
    """Whether ``encoding`` is plain UTF-8 (no BOM to strip), which the sandbox's own open() reads."""
    return encoding is None or codeact_codec(encoding) == "utf_8"


def codeact_decode(data: bytes, encoding: Any, errors: Any) -> str:
    """``data`` decoded as CPython's text mode would (universal newlines): Latin-1 by code point, the rest by the
    sandbox's own codecs (UTF-8, UTF-16, UTF-32, ASCII); any other encoding is a LookupError that says so, never a
    silent UTF-8 reading."""
    codec = "utf_8" if encoding is None else codeact_codec(encoding)
    if codec is None:
        raise LookupError(f"unknown encoding: {encoding} (the sandbox decodes UTF-8, UTF-16, UTF-32, ASCII and "
                          "Latin-1 only; read other text as bytes, open(path, 'rb'), and decode what you need)")
    if codec == "latin_1":
        text = "".join([chr(b) for b in data])
    else:
        boms = {"utf_16": (b"\xff\xfe", b"\xfe\xff"), "utf_32": (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")}.get(codec)
        if boms is not None and data and data[:len(boms[0])] not in boms:  # as CPython's text mode: no guessed order
            # CPython raises UnicodeError, which the sandbox lacks: its subclass, which a program can catch here
            why = f"UTF-{codec[-2:]} stream does not start with BOM (name the order: utf-{codec[-2:]}-le or -be)"
            raise UnicodeDecodeError(why)  # type: ignore[call-arg]  # the sandbox's takes the message alone
        name = "utf-8" if codec == "utf_8_sig" else codec.replace("_", "-")
        text = data.decode(name) if errors is None or errors == "strict" else data.decode(name, errors)
        if codec == "utf_8_sig" and text.startswith("\ufeff"):
            text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def codeact_read_text(path: Any, encoding: Any = None, errors: Any = None, newline: Any = None) -> str:
    """``Path.read_text(encoding=..., errors=...)``."""
    if codeact_is_utf8(encoding) and errors in (None, "strict") and newline is None:
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
        # at "\n" alone, as CPython's text files (str.splitlines also splits at form feeds and U+0085)
        parts = rest.split("\n")
        lines = [part + "\n" for part in parts[:-1]]
        if parts[-1]:
            lines.append(parts[-1])
        return lines

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
    if "b" in mode or (codeact_is_utf8(encoding) and errors in (None, "strict")):
        if encoding is None:
            return open(file, mode)
        return open(file, mode, encoding="utf-8")
    with open(file, "rb") as handle:
        data = handle.read()
    return codeact_TextFile(codeact_decode(data, encoding, errors))
