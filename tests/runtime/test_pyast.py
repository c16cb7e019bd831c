"""The host's ``ast.parse`` from several threads at once (issue 42: outline parses beside its workers; the warm
server runs programs in threads): CPython 3.11 counts the AST constructor's recursion per interpreter, so a thread
switch mid-tree (here forced by a garbage-collection callback) raised ``SystemError: AST constructor recursion
depth mismatch`` — seen in CI in test_outline_cache's four concurrent outlines."""
from __future__ import annotations

import gc
import threading
import time

from codeact.pyast import parse

SOURCE = "\n".join(f"def f{i}(a, b=[1, 2, (3, 4)]):\n    return [x for x in range(a) if x % {i + 1}]"
                   for i in range(300))


def test_threads_parsing_at_once_never_corrupt_each_others_trees() -> None:
    errors: list[BaseException] = []

    def switch(_phase: str, _info: dict[str, int]) -> None:
        time.sleep(0)  # a thread switch in the middle of a tree's construction

    def work() -> None:
        for _ in range(15):
            try:
                parse(SOURCE)
            except SystemError as exc:
                errors.append(exc)

    threshold = gc.get_threshold()
    gc.callbacks.append(switch)
    gc.set_threshold(50)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(switch)
        gc.set_threshold(*threshold)
    assert errors == []
