"""How large a plain value is once written out, each object counted once (the sandbox keeps its values' sharing)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def expanded_size(value: Any, budget: int) -> tuple[int, int]:
    """``(size, depth)`` of plain ``value`` as it is written out: one for each item, plus a string's characters and
    a big integer's machine words, and how deep its containers nest (a list of numbers: 1). Each list, tuple, dict
    and set is walked once (a memo by id; a value from the sandbox keeps its sharing: ``[[a] * 1000] * 1000`` is
    two lists of a thousand slots for 10**9 items), with no recursion; counting stops just past ``budget`` (a
    value that holds itself is past any). Host modules' bounds, the runner's tool-call arguments and
    :func:`codeact.core.limits.within` size with it."""
    def leaf(item: Any) -> int:
        if isinstance(item, (str, bytes)):
            return 1 + len(item)
        if isinstance(item, int):
            return 1 + (item.bit_length() >> 6)
        return 1

    def items(item: Any) -> Iterator[Any]:
        if isinstance(item, dict):
            yield from item
            yield from item.values()
        else:
            yield from item

    containers = (list, tuple, dict, set, frozenset)
    if not isinstance(value, containers):
        return leaf(value), 0
    memo: dict[int, tuple[int, int]] = {}
    held: list[Any] = []  # every container walked stays alive, so no id is another's meanwhile
    busy = {id(value)}
    stack: list[tuple[Any, Iterator[Any], list[int]]] = [(value, items(value), [1, 0])]
    while stack:
        node, pending, done = stack[-1]
        for child in pending:
            if isinstance(child, containers):
                known = memo.get(id(child))
                if known is None:
                    if id(child) in busy:
                        return budget + 1, len(stack)
                    busy.add(id(child))
                    stack.append((child, items(child), [1, 0]))
                    break
                size, depth = known
            else:
                size, depth = leaf(child), 0
            done[0] += size
            done[1] = max(done[1], depth + 1)
            if done[0] > budget:
                return budget + 1, max(len(stack), done[1])
        else:
            stack.pop()
            busy.discard(id(node))
            memo[id(node)] = (done[0], done[1])
            held.append(node)
            if stack:
                parent = stack[-1][2]
                parent[0] += done[0]
                parent[1] = max(parent[1], done[1] + 1)
                if parent[0] > budget:
                    return budget + 1, max(len(stack), parent[1])
    return memo[id(value)]
