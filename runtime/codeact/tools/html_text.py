"""An HTML page as readable text for web_fetch: headings as ``#``, list items as ``-``, links as ``[text](url)``.

Imported only when a fetched page is HTML (``html.parser`` costs a few milliseconds at import).
"""
from __future__ import annotations

import re
import sys
import urllib.parse
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head"}
_BLOCKS = {"p", "div", "section", "article", "header", "footer", "nav", "aside", "main", "ul", "ol", "table", "tr",
           "blockquote", "dl", "dt", "dd", "form", "figure", "figcaption", "details", "summary", "hr"}
_HEADINGS = {f"h{level}": "\n\n" + "#" * level + " " for level in range(1, 7)}
# what an opening tag writes, for the tags that only write something
_OPENS = {**{tag: "\n\n" for tag in _BLOCKS}, **_HEADINGS, "li": "\n- ", "br": "\n", "td": " | ", "th": " | "}
_CLOSES_A_BLOCK = _BLOCKS | set(_HEADINGS)


_OPEN_LINKS = 256  # links open at once (nested `<a>`, none closed) past which an `<a>` is read as plain text
_TITLE = 4096  # characters of the title kept
_KEPT = 4096  # pieces the reader keeps apart past the earliest open link that may still be left out


class _Full(Exception):
    """The reader holds ``max_chars`` characters of text: the rest of the page is not read."""


class _TextReader(HTMLParser):
    """Collects the page's text (``out``) and title; links are resolved against ``base_url`` when given.

    What it writes is joined as it goes (``done``): a piece a list item of its own held ~25 times the page.
    Only the pieces from the "[" of an open link that may still be left out (no text since) are kept apart;
    past :data:`_KEPT` of them (blanks: ``<br>`` after ``<br>`` in an icon's link), that link is kept as
    written. Past ``max_chars`` characters of text it stops (:class:`_Full`)."""

    def __init__(self, base_url: str, max_chars: int | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.max_chars = sys.maxsize if max_chars is None else max_chars
        self.full = False
        self.done: list[str] = []  # what was written before ``out``, joined
        self.out: list[str] = []
        self.size = 0  # characters written, in ``done`` and ``out``
        self.skip = 0
        self.pre = 0
        self.title: list[str] = []
        self.title_size = 0
        self.in_title = False
        # an open link: its URL, where its "[" is in ``out`` (-1: it stays, whatever follows), marks before
        self.links: list[list[Any] | None] = []
        self.marks = 0  # pieces written so far that are not blank

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP:
            self.skip += 1
        elif self.skip:
            return
        elif tag in _OPENS:
            self._put(_OPENS[tag])
        elif tag == "pre":
            self.pre += 1
            self._put("\n\n```\n")
        elif tag == "a" and len(self.links) < _OPEN_LINKS:
            self._open_link(dict(attrs).get("href") or "")

    def _open_link(self, href: str) -> None:
        if href and not href.startswith(("#", "javascript:", "mailto:")):
            self.links.append([href, len(self.out), self.marks])
            self._put("[")
        else:
            self.links.append(None)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif self.skip:
            return
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._put("\n```\n\n")
        elif tag == "a" and self.links:
            link = self.links.pop()
            if link is None:
                return
            href, at, marks = link
            if self.marks == marks + 1 and at >= 0:  # only blanks since its "[": a link without text (an icon)
                self.size -= sum(len(piece) for piece in self.out[at:])  # is left out
                del self.out[at:]
                self.marks = marks
            else:
                self._put(f"]({urllib.parse.urljoin(self.base_url, href) if self.base_url else href})")
        elif tag in _CLOSES_A_BLOCK:
            self._put("\n\n")

    def _put(self, piece: str) -> None:
        size = self.size + len(piece)
        if size > self.max_chars:
            piece = piece[:self.max_chars - self.size]
            size = self.max_chars
            self.full = True
        out = self.out
        out.append(piece)
        self.size = size
        if piece and not piece.isspace():
            self.marks += 1
        if len(out) > 2 * _KEPT:
            self._join()
        if self.full:
            raise _Full

    def _join(self) -> None:
        """Join the pieces before the "[" of the earliest open link that may still be left out: the links above
        it hold only blanks and the "[" of those open (a link with text since its "[" stays, whatever follows).
        Where that leaves more than :data:`_KEPT` pieces apart, those links are kept as written too."""
        first, above = len(self.links), 0
        for k in range(len(self.links) - 1, -1, -1):
            link = self.links[k]
            if link is None:
                continue
            if link[1] < 0 or self.marks != link[2] + 1 + above:
                break
            first, above = k, above + 1
        for link in self.links[:first]:
            if link is not None:
                link[1] = -1
        floor = len(self.out) if first == len(self.links) else self.links[first][1]  # type: ignore[index]
        if len(self.out) - floor > _KEPT:
            for link in self.links[first:]:
                if link is not None:
                    link[1] = -1
            floor = len(self.out)
        if floor:
            self.done.append("".join(self.out[:floor]))
            del self.out[:floor]
            for link in self.links[first:]:
                if link is not None and link[1] >= 0:
                    link[1] -= floor

    def handle_data(self, data: str) -> None:
        if self.in_title:
            if self.title_size < _TITLE:
                self.title.append(data[:_TITLE - self.title_size])
                self.title_size += len(self.title[-1])
        elif not self.skip:
            self._put(data if self.pre else re.sub(r"\s+", " ", data))


_CHUNK = 1 << 16
_PENDING = 4096  # characters of an unfinished tag or declaration html.parser's close() is given


def html_to_text(html: str, base_url: str = "", check: Callable[[], None] | None = None) -> str:
    """Readable text of an HTML page: headings as ``#``, list items as ``-``, links as ``[text](url)`` (a link
    without text, an icon, left out). Every step is linear in the page, and ``check`` (the run's deadline: it
    raises once it has passed) is called before each 64 KiB of it is read."""
    return read_html(html, base_url, check)[0]


def read_html(html: str, base_url: str = "", check: Callable[[], None] | None = None,
              max_chars: int | None = None) -> tuple[str, int | None]:
    """:func:`html_to_text`, and ``None`` where all of ``html`` was read, or the characters of it within which the
    reading stopped, its text ``max_chars`` characters long (before blank lines are dropped). What it holds is a
    few times that text, never pieces of it apart (the page's text of ``ab<br>`` so held 25 times the page)."""
    reader = _TextReader(base_url, max_chars)
    stopped: int | None = len(html)
    try:
        for start in range(0, len(html), _CHUNK):
            if check is not None:
                check()
            stopped = min(start + _CHUNK, len(html))
            reader.feed(html[start:start + _CHUNK])
        if check is not None:
            check()
        stopped = len(html)
        if len(reader.rawdata) > _PENDING:  # an unclosed tag at the end: close() would parse it in quadratic time
            pending, reader.rawdata = reader.rawdata, ""  # or worse (`<a` 50,000 times: 17 s), so it is the
            reader.handle_data(pending)  # page's text as it is
        reader.close()
        stopped = None
    except _Full:
        pass
    del html
    reader.done.append("".join(reader.out))
    del reader.out[:]
    text = _tidy(reader.done)
    title = " ".join("".join(reader.title).split())
    return (f"# {title}\n\n{text}" if title and not text.startswith("# ") else text), stopped


def _tidy(done: list[str]) -> str:
    """The text ``done`` holds (emptied: each copy is let go once the next is made), its lines stripped (those in
    a ``` block only at their end), no more than one blank line in a row; its lines read and joined 64 KiB at a
    time (a list of all of them held ~50 bytes a line)."""
    body = "".join(done)
    del done[:]
    blocks: list[str] = []
    in_code = False
    pos = 0
    while True:
        end = body.rfind("\n", pos, pos + _CHUNK) if pos + _CHUNK < len(body) else -1
        if end < 0 and pos + _CHUNK < len(body):
            end = body.find("\n", pos + _CHUNK)
        lines = (body[pos:] if end < 0 else body[pos:end]).split("\n")
        for k, line in enumerate(lines):
            if line.strip() == "```":
                in_code = not in_code
                lines[k] = "```"
            else:
                lines[k] = line.rstrip() if in_code else line.strip()
        blocks.append("\n".join(lines))
        if end < 0:
            break
        pos = end + 1
    del body
    text = "\n".join(blocks)
    del blocks[:]
    return re.sub(r"\n{3,}", "\n\n", text).strip()
