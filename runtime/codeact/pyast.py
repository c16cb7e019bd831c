"""The host's ``ast.parse``, one thread at a time.

CPython (3.11.7 here) counts the AST constructor's recursion per interpreter, not per thread: two threads building
trees at once — concurrent runs of the warm server, outline parsing beside its workers — can fail with
``SystemError: AST constructor recursion depth mismatch`` when one switches threads mid-tree (a garbage
collection running Python code). Every parse of the runtime's goes through :func:`parse`.
"""
from __future__ import annotations

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never beside another thread's."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename)


__all__ = ["parse"]
