"""What a failed pydantic-monty run tells the program: the type check's findings, triaged into the refusal of a bad
tool call (before any tool runs) or notes shown after the run, and the sandbox's syntax and runtime errors as an
:class:`~codeact.errors.ErrorInfo` with the program's own line and a hint.

Imported by :mod:`codeact.backends.monty` only when the check finds something or a program fails.
"""
# Imports inside functions are lazy: each module is imported only when a failure needs it (start-up cost).
from __future__ import annotations

import builtins
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..core.toolset import namespaces
from ..errors import ErrorInfo
from .program import Program

# Type-check findings that can mean a tool is called wrongly. They block the run (before any tool runs) only when
# they are about a tool; every other finding is the checker's business, not the program's (see _triage).
_CALL_CODES = {"missing-argument", "unknown-argument", "too-many-positional-arguments", "invalid-argument-type",
               "parameter-already-assigned"}
# Findings shown as a note after the run: likely real mistakes in the program's own calls. The rest are dropped
# (the checker's builtins and modules are not the sandbox's; "may be None" is the program's call to make).
_NOTE_CODES = _CALL_CODES | {"call-non-callable", "unresolved-reference"}
_MAX_NOTES = 3
_PRIORITY = {"too-many-positional-arguments": 0, "unknown-argument": 1, "parameter-already-assigned": 2,
             "invalid-argument-type": 3, "missing-argument": 4}
# Patterns, not compiled ones: `re` compiles each once, when a check finds something or a program fails.
_FINDING = r"(?m)^main\.py:(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[\w-]+)\] (?P<msg>.*)$"
_CALLEE = r"(?:function|bound method) `(?:_(?P<space>\w+)_tools\.)?(?P<name>[\w]+)`"
_BUILTIN_NAMES = frozenset(dir(builtins))


class _Finding(NamedTuple):
    """One finding of the type check."""

    line: int
    col: int
    code: str
    message: str


_LIMIT_MESSAGES = [
    (r"^TimeoutError: feed time limit", "TimeoutError",
     "the program ran longer than the {timeout:g} s time limit (raise it with --timeout)"),
    (r"^MemoryError", "MemoryError",
     "the program used more than the {memory_mib:g} MiB memory limit (CODEACT_MEMORY raises it)"),
    (r"^RuntimeError: suspension limit", "LimitExceeded",
     "the program made more than {tool_calls} tool calls (CODEACT_TOOL_CALLS raises it)"),
]


def triage(report: str, program: Program) -> tuple[ErrorInfo | None, list[tuple[int, str]]]:
    """What the type check found: the refusal of a bad tool call (or ``None``), and notes to show after the run.

    A report with a syntax error refuses nothing: the sandbox's parser then says what is wrong, and where.
    """
    findings = [_Finding(int(m["line"]), int(m["col"]), m["code"], m["msg"]) for m in re.finditer(_FINDING, report)]
    if any(f.code == "invalid-syntax" for f in findings):
        return None, []
    lines = program.code.splitlines()
    spaces = namespaces(program.tools)
    notes: list[tuple[int, str]] = []
    unpacked = _unpacked_lines(program.code)
    # the checker cannot know what ``grep(**opts)`` passes (it guesses from the dict's value types): the call is
    # checked when it runs, by the tool's own signature
    findings = [f for f in findings if not (f.code in _CALL_CODES and f.line in unpacked) and not _may_fit(f)]
    refused = [(f, tool) for f in findings if (tool := _tool_of(f, program, spaces, lines)) is not None]
    if refused:  # the first bad call; on its line, the finding that says most (a positional call lacks a keyword)
        first = min(f.line for f, _ in refused)
        f, tool = min((r for r in refused if r[0].line == first), key=lambda r: _PRIORITY.get(r[0].code, 9))
        return _refusal(f, tool, program), []
    for f in findings:
        if f.code in _NOTE_CODES and not _is_noise(f) and len(notes) < _MAX_NOTES:
            note = (f.line, f"line {f.line}: {f.message} (found by the type check; the program ran anyway)")
            if note not in notes:
                notes.append(note)
    return None, notes


def _may_fit(f: _Finding) -> bool:
    """Whether an argument's type, as the checker guesses it, may still be the one expected: a value from a list
    of mixed dicts is ``str | int`` to it (``f["path"]``), ``[a, b]`` taken from one is ``list[str | int]``; the
    tool checks such a call when it runs."""
    if f.code != "invalid-argument-type":
        return False
    types = re.search(r"Expected `([^`]+)`, found `([^`]+)`", f.message)
    if not types or ("|" not in types[2] and "Unknown" not in types[2]):
        return False
    expected = [t.strip() for t in re.split(r"\|(?![^\[]*\])", types[1])]
    found = [t.strip() for t in re.split(r"\|(?![^\[]*\])", types[2])]
    outer = {t.split("[")[0] for t in expected}
    return any(t in expected or t.startswith("Unknown") or ("[" in t and t.split("[")[0] in outer) for t in found)


def _unpacked_lines(code: str) -> set[int]:
    """The lines of every call that passes ``**mapping`` or ``*sequence`` arguments."""
    import ast

    from ..pyast import parse

    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return set()
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (any(k.arg is None for k in node.keywords)
                                           or any(isinstance(a, ast.Starred) for a in node.args)):
            found.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return found


def _tool_of(f: _Finding, program: Program, spaces: Mapping[str, Any], lines: list[str]) -> str | None:
    """The tool a finding is about (``"view"``, ``"server.tool"``), or ``None`` when it is about something else."""
    if f.code in _CALL_CODES:
        callee = re.search(_CALLEE, f.message)
        if callee:
            name = f"{callee['space']}.{callee['name']}" if callee["space"] else callee["name"]
            if name in program.tools:
                return name
        return None
    if f.code == "unresolved-reference":  # an unknown name that is called: an unknown tool
        name = re.search(r"`([\w]+)`", f.message)
        if name and name[1] not in _BUILTIN_NAMES and 0 < f.line <= len(lines):
            if re.search(rf"(?<![\w.]){re.escape(name[1])}\s*\(", lines[f.line - 1]):
                return name[1]
        return None
    if f.code == "unresolved-attribute":  # server.unknown_tool
        space = re.search(r"type `_(\w+)_tools` has no attribute `(\w+)`", f.message)
        if space and space[1] in spaces:
            return f"{space[1]}.{space[2]}"
    return None


def _is_noise(f: _Finding) -> bool:
    if f.code == "unresolved-reference":
        name = re.search(r"`([\w]+)`", f.message)
        return bool(name and name[1] in _BUILTIN_NAMES)
    return "`codeact_" in f.message or any(f"`{n}`" in f.message for n in ("_r", "_s", "_c", "_n", "_d"))  # the rewrite's


def _refusal(f: _Finding, tool: str, program: Program) -> ErrorInfo:
    from ..core.hints import tool_call_hint  # only when a program fails

    message = re.sub(r"bound method `_(\w+)_tools\.(\w+)`", r"`\1.\2`", f.message)
    message = re.sub(r"type `_(\w+)_tools`", r"namespace `\1`", message)
    if f.code == "too-many-positional-arguments":
        message = f"{tool}() takes keyword arguments only"
    return ErrorInfo("TypeError", f"{message} (line {f.line}; checked before running, so no tool ran)", f.line,
                     tool_call_hint(f.code, tool, f.line, program.code, program.tools))


def syntax_error(exc: Any, program: Program) -> ErrorInfo:
    """The sandbox's parser refused the program: CPython's own message, line and caret where CPython refuses it
    too (it names the real cause, e.g. ``'(' was never closed``), else the sandbox's."""
    from ..pyast import parse

    try:
        parse(program.code, "<program>")
    except SyntaxError as err:
        where = ""
        if err.text and err.offset:
            text = err.text.rstrip("\r\n")
            indent = len(text) - len(text.lstrip())
            one_line = err.end_lineno in (None, err.lineno)
            width = max(1, (err.end_offset or err.offset + 1) - err.offset) if one_line else 1
            where = f"\n    {text.strip()}\n    {' ' * (err.offset - 1 - indent)}{'^' * width}"
        return ErrorInfo("SyntaxError", f"{err.msg}{where}", err.lineno, None)
    except (ValueError, OverflowError, RecursionError, MemoryError):
        pass  # a NUL byte, a nesting too deep for CPython: the sandbox's own message below
    text = str(exc).strip()
    line = None
    try:
        frames = exc.traceback()
        line = frames[-1].line if frames else None
    except Exception:  # noqa: BLE001 - a traceback is a nicety
        pass
    return ErrorInfo("SyntaxError", text.splitlines()[-1] if text else "invalid syntax", line,
                     _hint("SyntaxError", text, program, None))


def worker_lost(exc: Any, program: Program, took: float) -> ErrorInfo:
    """The sandbox's worker ended under the program (``MontyCrashedError``): killed at its request timeout (the run's
    limit and a second, reached while a large program still compiles) it is the run's time limit; otherwise the
    worker ran out of memory or crashed, said as such (never a host traceback)."""
    lim = program.limits
    if took >= lim.timeout:
        from ..core.hints import timeout_hint

        return ErrorInfo("TimeoutError", f"the program ran longer than the {lim.timeout:g} s time limit (raise it "
                         "with --timeout; a large program takes long to compile)", None, timeout_hint(program.code))
    return ErrorInfo("MemoryError", f"the sandbox's worker stopped ({str(exc).strip() or 'crashed'}): most often the "
                     f"program used more than the {lim.memory / 1048576:g} MiB memory limit (CODEACT_MEMORY raises "
                     "it)", None, None)


def runtime_error(exc: Any, program: Program, seen: Mapping[str, list[str]]) -> ErrorInfo:
    """The sandbox's runtime error as the program gets it; ``seen``: the keys of the dicts each tool returned."""
    text = str(exc).strip()
    for pattern, kind, template in _LIMIT_MESSAGES:
        if re.search(pattern, text):
            lim = program.limits
            hint = None
            if kind == "TimeoutError":
                from ..core.hints import timeout_hint

                hint = timeout_hint(program.code)
            return ErrorInfo(kind, template.format(timeout=lim.timeout, memory_mib=lim.memory / 1048576,
                                                   tool_calls=lim.tool_calls), None, hint)
    kind, _, message = text.partition(": ")
    if not message:
        kind, message = "Error", text
    line = None
    try:
        frames = [f for f in exc.traceback() if f.filename != "repl_type_stubs.pyi"]
        while len(frames) > 1 and (_in_rewrite(frames[-1]) or frames[-1].filename != frames[0].filename):
            frames.pop()  # the error is the caller's: the line that called the bound method or a prelude helper
        if frames:
            line = frames[-1].line
    except Exception:  # noqa: BLE001 - a traceback is a nicety
        pass
    if line is None and "exceptions can only be called with" in message:
        line = _exception_call_line(program.code)  # monty gives no traceback for this one
    return ErrorInfo(kind, message, line, _hint(kind, message, program, seen))


def _exception_call_line(code: str) -> int | None:
    """The line of the first ``SomeError(...)`` call with more than one argument or one that is not a string."""
    import ast

    from ..pyast import parse

    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id.endswith(("Error", "Exception", "Exit")) and (len(n.args) > 1 or any(
                 isinstance(a, ast.Constant) and not isinstance(a.value, str) for a in n.args))]
    return min((n.lineno for n in calls), default=None)


def _in_rewrite(frame: Any) -> bool:
    """Whether a traceback frame is inside a lambda that codeact.core.rewrite wrote (``_r.get(...)``)."""
    source, column = getattr(frame, "source_line", None) or "", getattr(frame, "column", None) or 0
    return frame.function_name == "<lambda>" and source[max(column - 1, 0):].startswith(("_r.", "_s."))


def _hint(kind: str, message: str, program: Program, seen: Mapping[str, list[str]] | None) -> str | None:
    from ..core.hints import hint_for  # only when a program fails: it compiles many patterns

    return hint_for(kind, message, program.tools, result_keys=seen)


__all__ = ["runtime_error", "syntax_error", "triage"]
