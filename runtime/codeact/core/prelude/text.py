"""Prelude helpers for ``re`` and ``str`` (see codeact.core.prelude)."""
from __future__ import annotations

import re as codeact_re
from typing import Any

# --------------------------------------------------------------------------------------------------- re
codeact_ASCII_WORD = "a-zA-Z0-9_"
codeact_ASCII_SPACE = " \\t\\n\\r\\f\\v"
codeact_re_cache: dict[Any, Any] = {}


def codeact_re_inline_flags(pattern: str) -> tuple[str, str]:
    """The global inline flags at the start of ``pattern`` (``(?im)``) and the pattern without ``a`` among them."""
    if not pattern.startswith("(?"):
        return "", pattern
    end = pattern.find(")")
    letters = pattern[2:end] if end > 2 else ""
    if not letters or any(ch not in "aiLmsux" for ch in letters):
        return "", pattern
    kept = "".join([ch for ch in letters if ch != "a"])
    return letters, ("(?" + kept + ")" if kept else "") + pattern[end + 1:]


def codeact_re_translate(pattern: Any, flags: Any = 0) -> Any:
    """``pattern`` as the sandbox's engine must read it to match as CPython's ``re`` does: ``$`` (without MULTILINE)
    becomes ``(?=\\n?\\z)`` (``\\Z`` already matches as CPython's), and under re.ASCII (or ``(?a)``)
    ``\\w \\W \\d \\D \\s \\S \\b \\B`` become their ASCII classes. Anything but a string is returned as it is."""
    if not isinstance(pattern, str):
        return pattern
    bits = flags if isinstance(flags, int) else 0
    letters, pattern = codeact_re_inline_flags(pattern)
    ascii_only = bits & 256 or "a" in letters
    multiline = bits & 8 or "m" in letters
    out = []
    i = 0
    n = len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if ascii_only and nxt in "wdsWDS":
                out.append(codeact_re_ascii_class(nxt, in_class))
            elif ascii_only and nxt in "bB" and not in_class:
                word = "[" + codeact_ASCII_WORD + "]"
                if nxt == "b":
                    out.append("(?:(?<=" + word + ")(?!" + word + ")|(?<!" + word + ")(?=" + word + "))")
                else:
                    out.append("(?:(?<=" + word + ")(?=" + word + ")|(?<!" + word + ")(?!" + word + "))")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        if ch == "$" and not multiline:
            out.append("(?=\\n?\\z)")
        else:
            out.append(ch)
        i += 1
    prefix = "(?" + letters.replace("a", "") + ")" if letters.replace("a", "") else ""
    body = "".join(out)
    return body if body.startswith(prefix) else prefix + body


def codeact_re_ascii_class(letter: str, in_class: bool) -> str:
    """CPython's ASCII meaning of ``\\w``, ``\\d``, ``\\s`` and their negations, in or out of a ``[...]``."""
    inner = {"w": codeact_ASCII_WORD, "d": "0-9", "s": codeact_ASCII_SPACE}[letter.lower()]
    if letter.islower():
        return inner if in_class else "[" + inner + "]"
    return "\\" + letter if in_class else "[^" + inner + "]"


def codeact_re_translate_template(template: Any) -> Any:
    """A ``re.sub`` template with each group reference ``\\N`` written ``\\g<N>`` (which the sandbox reads as
    CPython does whatever follows it) and ``\\n``-style escapes made the characters they stand for (the sandbox
    keeps them as written); anything but a string is returned as it is."""
    if not isinstance(template, str) or "\\" not in template:
        return template
    out = []
    i = 0
    n = len(template)
    while i < n:
        ch = template[i]
        if ch == "\\" and i + 1 < n:
            nxt = template[i + 1]
            if nxt in "123456789":
                j = i + 2
                if j < n and template[j] in "0123456789" and int(template[i + 1:j + 1]) < 100:
                    j += 1
                out.append("\\g<" + template[i + 1:j] + ">")
                i = j
                continue
            escape = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b"}.get(nxt)
            out.append(escape if escape is not None else template[i:i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def codeact_re_pattern(pattern: Any, flags: Any = 0) -> Any:
    key = (pattern, flags)
    if key not in codeact_re_cache:
        if len(codeact_re_cache) > 256:
            codeact_re_cache.clear()
        codeact_re_cache[key] = codeact_re_translate(pattern, flags)
    return codeact_re_cache[key]


def codeact_re_template(template: Any) -> Any:
    return codeact_re_translate_template(template)


def codeact_re_subn(pattern: Any, repl: Any, string: str, count: int = 0, flags: int = 0) -> tuple[str, int]:
    """``re.subn``, and ``re.sub`` with a function as the replacement: each match's replacement joined in."""
    compiled = codeact_re.compile(codeact_re_pattern(pattern, flags), flags) if isinstance(pattern, str) else pattern
    out = []
    last = 0
    done = 0
    for match in compiled.finditer(string):
        if count and done >= count:
            break
        if not isinstance(repl, str):
            out.append(string[last:match.start()])
            out.append(repl(match))
            last = match.end()
        done += 1
    if isinstance(repl, str):
        return codeact_re.sub(compiled, codeact_re_template(repl), string, count), done
    out.append(string[last:])
    return "".join(out), done


def codeact_re_sub(pattern: Any, repl: Any, string: str, count: int = 0, flags: int = 0) -> str:
    if isinstance(repl, str):
        return codeact_re.sub(codeact_re_pattern(pattern, flags), codeact_re_template(repl), string, count, flags)
    return codeact_re_subn(pattern, repl, string, count, flags)[0]


# --------------------------------------------------------------------------------------------------- str
def codeact_maketrans(x: Any, y: Any = None, z: Any = None) -> dict[int, Any]:
    """``str.maketrans``: a dict from code points to strings (or ``None``)."""
    table: dict[int, Any] = {}
    if y is None:
        for key in x:
            table[ord(key) if isinstance(key, str) else key] = x[key]
        return table
    for i in range(len(x)):
        table[ord(x[i])] = y[i]
    if z is not None:
        for ch in z:
            table[ord(ch)] = None
    return table


def codeact_translate(text: Any, table: Any) -> Any:
    """``str.translate``; any other receiver's own ``translate``."""
    if not isinstance(text, str):
        return text.translate(table)
    out = []
    for ch in text:
        code = ord(ch)
        if code in table:
            new = table[code]
            if new is None:
                continue
            out.append(chr(new) if isinstance(new, int) else new)
        else:
            out.append(ch)
    return "".join(out)
