"""What a search returns, bounded as the runner counts it: the first items in path order within the item count and
the tool-result byte limit, kept while any number stream past (so memory stays bounded), and their sizes."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring as _json_str  # type: ignore[attr-defined]  # as the runner counts
from operator import itemgetter
from typing import Any, NamedTuple


class Answer(NamedTuple):
    """What a grep found: the first ``hits`` in path order (``(path, line, text)``, paths workspace-relative), and
    ``total``, the number of matching lines in all (at least that many when not ``exact``)."""

    hits: list[tuple[str, int, str]]
    total: int
    exact: bool = True


class FirstItems:
    """The first items in sort order that fit in ``count`` items and ``budget`` bytes, kept while any number stream
    past: at most about twice that is ever held. ``size(item)`` must not exceed what the runner counts for the
    item (its JSON plus 2), so that what is kept is never less than what the runner would return."""

    def __init__(self, count: int, budget: int, size: Callable[[Any], int]) -> None:
        self.count, self.budget, self.size = count, budget, size
        self.items: list[Any] = []
        self.held = 0  # size of ``items``
        self.seen = 0  # items offered
        self.limit: Any = None  # every item from this one on is out
        self._hold = 2 * min(count, budget // 16 + 1)

    def add(self, item: Any) -> None:
        self.seen += 1
        if self.limit is not None and item >= self.limit:
            return
        self.items.append(item)
        self.held += self.size(item)
        if len(self.items) > self._hold or self.held > 2 * self.budget:
            self._prune()

    def extend(self, items: list[Any], size: int) -> None:
        """Add many at once; ``size``: their total size."""
        self.seen += len(items)
        if self.limit is not None:
            items = [item for item in items if item < self.limit]
            size = sum(map(self.size, items))
        self.items.extend(items)
        self.held += size
        if len(self.items) > self._hold or self.held > 2 * self.budget:
            self._prune()

    def bar(self, item: Any) -> None:
        """Leave out ``item`` and everything after it (a part searched apart could not keep it)."""
        if self.limit is None or item < self.limit:
            self.limit = item

    def _prune(self) -> None:
        import bisect
        from itertools import accumulate

        self.items.sort()
        if self.limit is not None:
            del self.items[bisect.bisect_left(self.items, self.limit):]
        ends = list(accumulate(map(self.size, self.items)))  # where each item ends: the sizes so far
        kept = min(self.count, bisect.bisect_right(ends, self.budget))
        total = ends[kept - 1] if kept else 0
        if kept < len(self.items):
            first_out = self.items[kept]
            self.limit = first_out if self.limit is None or first_out < self.limit else self.limit
            del self.items[kept:]
        self.held = total

    def result(self) -> tuple[list[Any], int]:
        """The items, sorted, and how many more within ``count`` the byte budget left out."""
        if self.limit is None and len(self.items) <= self.count and self.held <= self.budget:
            self.items.sort()  # all fit: ``held`` is their exact size, no per-item sizes needed
        else:
            self._prune()
        return self.items, max(0, min(self.seen, self.count) - len(self.items))


def hits_size(hits: list[tuple[str, int, str]]) -> int:
    """The size of all hits as the runner counts them (see :func:`hit_sizes`), in a few C-speed passes: one
    encoding of all texts joined by NUL (each NUL encodes to 6 characters), one of all line numbers."""
    if not hits:
        return 0
    n = len(hits)
    texts = len(_json_str("\0".join(map(itemgetter(2), hits)))) - 2 - 6 * (n - 1) + 2 * n  # each with quotes
    paths = len(_json_str("\0".join(map(itemgetter(0), hits)))) - 2 - 6 * (n - 1) + 2 * n
    digits = len(",".join(map(str, map(itemgetter(1), hits)))) - (n - 1)
    return texts + paths + 32 * n + digits  # {"path": , "line": , "text": } and the runner's 2: 32 an item


def hit_sizes(hits: list[tuple[str, int, str]]) -> list[int]:
    """Each hit's size as the runner counts it (its JSON, ``ensure_ascii``, plus 2), without a json.dumps each."""
    paths: dict[str, int] = {}
    sizes = []
    for path, number, text in hits:
        size = paths.get(path)
        if size is None:
            size = paths[path] = len(_json_str(path)) + 32  # {"path": P, "line": , "text": } and the runner's 2
        sizes.append(size + len(str(number)) + len(_json_str(text)))
    return sizes


def paths_fitting(paths: list[str], budget: int) -> int:
    """How many leading ``paths`` fit in ``budget`` bytes as the runner counts a list of strings."""
    if 12 * sum(map(len, paths)) + 4 * len(paths) <= budget:
        return len(paths)  # fits even if every character took 12 in JSON (ensure_ascii: a pair of \\uXXXX at most)
    whole = len(_json_str("\0".join(paths))) - 2 * len(paths) + 4 if paths else 0  # each NUL: 6; quotes and 2
    return len(paths) if whole <= budget else fitting([len(_json_str(p)) + 2 for p in paths], budget)


def fitting(sizes: list[int], budget: int) -> int:
    """How many leading items of these sizes fit in ``budget`` bytes."""
    import bisect
    from itertools import accumulate

    return bisect.bisect_right(list(accumulate(sizes)), budget)
