"""An HTML page as readable text for web_fetch: headings as ``#``, list items as ``-``, links as ``[text](url)``.

Imported only when a fetched page is HTML (``html.parser`` costs a few milliseconds at import).
"""
from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head"}
_BLOCKS = {"p", "div", "section", "article", "header", "footer", "nav", "aside", "main", "ul", "ol", "table", "tr",
           "blockquote", "dl", "dt", "dd", "form", "figure", "figcaption", "details", "summary", "hr"}
_HEADINGS = {f"h{level}": "\n\n" + "#" * level + " " for level in range(1, 7)}
# what an opening tag writes, for the tags that only write something
_OPENS = {**{tag: "\n\n" for tag in _BLOCKS}, **_HEADINGS, "li": "\n- ", "br": "\n", "td": " | ", "th": " | "}
_CLOSES_A_BLOCK = _BLOCKS | set(_HEADINGS)


class _TextReader(HTMLParser):
    """Collects the page's text (``out``) and title; links are resolved against ``base_url`` when given."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.title: list[str] = []
        self.in_title = False
        self.links: list[tuple[str, int, int] | None] = []  # an open link: its URL, where its "[" is, marks before
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
        elif tag == "a":
            self._open_link(dict(attrs).get("href") or "")

    def _open_link(self, href: str) -> None:
        if href and not href.startswith(("#", "javascript:", "mailto:")):
            self.links.append((urllib.parse.urljoin(self.base_url, href) if self.base_url else href, len(self.out),
                               self.marks))
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
            if self.marks == marks + 1:  # only blanks since its "[": a link without text (an icon) is left out
                del self.out[at:]
                self.marks = marks
            else:
                self._put(f"]({href})")
        elif tag in _CLOSES_A_BLOCK:
            self._put("\n\n")

    def _put(self, piece: str) -> None:
        self.out.append(piece)
        if piece and not piece.isspace():
            self.marks += 1

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skip:
            self._put(data if self.pre else re.sub(r"\s+", " ", data))


_CHUNK = 1 << 16
_PENDING = 4096  # characters of an unfinished tag or declaration html.parser's close() is given


def html_to_text(html: str, base_url: str = "", check: Callable[[], None] | None = None) -> str:
    """Readable text of an HTML page: headings as ``#``, list items as ``-``, links as ``[text](url)`` (a link
    without text, an icon, left out). Every step is linear in the page, and ``check`` (the run's deadline: it
    raises once it has passed) is called before each 64 KiB of it is read."""
    reader = _TextReader(base_url)
    for start in range(0, len(html), _CHUNK):
        if check is not None:
            check()
        reader.feed(html[start:start + _CHUNK])
    if check is not None:
        check()
    if len(reader.rawdata) > _PENDING:  # an unclosed tag at the end: close() would parse it in quadratic time or
        reader.handle_data(reader.rawdata)  # worse (`<a` 50,000 times: 17 s), so it is the page's text as it is
        reader.rawdata = ""
    reader.close()
    body = "".join(reader.out)
    lines, in_code = [], False
    for line in body.split("\n"):
        if line.strip() == "```":
            in_code = not in_code
            lines.append("```")
        else:
            lines.append(line.rstrip() if in_code else line.strip())
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(reader.title).split())
    return f"# {title}\n\n{text}" if title and not text.startswith("# ") else text
