"""Prelude stand-ins for standard modules the sandbox lacks that keep state or change their arguments in
place: heapq, io.StringIO, ChainMap, cmp_to_key, total_ordering, TypedDict (see codeact.core.prelude)."""
from __future__ import annotations

from typing import Any

from .objects import codeact_less, codeact_sorted


# --------------------------------------------------------------------------------------------------- modules
class codeact_heapq:
    """``heapq``: CPython's algorithms (the same heap layout, so the same order of equal items)."""

    def heappush(self, heap: list[Any], item: Any) -> None:
        heap.append(item)
        self._siftdown(heap, 0, len(heap) - 1)

    def heappop(self, heap: list[Any]) -> Any:
        last = heap.pop()
        if heap:
            first = heap[0]
            heap[0] = last
            self._siftup(heap, 0)
            return first
        return last

    def heapify(self, heap: list[Any]) -> None:
        for i in range(len(heap) // 2 - 1, -1, -1):
            self._siftup(heap, i)

    def heapreplace(self, heap: list[Any], item: Any) -> Any:
        first = heap[0]
        heap[0] = item
        self._siftup(heap, 0)
        return first

    def heappushpop(self, heap: list[Any], item: Any) -> Any:
        if heap and codeact_less(heap[0], item):
            first = heap[0]
            heap[0] = item
            self._siftup(heap, 0)
            return first
        return item

    def nlargest(self, n: int, iterable: Any, key: Any = None) -> list[Any]:
        return codeact_sorted(iterable, key, True)[:n]

    def nsmallest(self, n: int, iterable: Any, key: Any = None) -> list[Any]:
        return codeact_sorted(iterable, key, False)[:n]

    def merge(self, *iterables: Any, key: Any = None, reverse: bool = False) -> list[Any]:
        out = []
        for part in iterables:
            out.extend(part)
        return codeact_sorted(out, key, reverse)

    def _siftdown(self, heap: list[Any], start: int, pos: int) -> None:
        item = heap[pos]
        while pos > start:
            parent = (pos - 1) >> 1
            if codeact_less(item, heap[parent]):
                heap[pos] = heap[parent]
                pos = parent
                continue
            break
        heap[pos] = item

    def _siftup(self, heap: list[Any], pos: int) -> None:
        end = len(heap)
        start = pos
        item = heap[pos]
        child = 2 * pos + 1
        while child < end:
            right = child + 1
            if right < end and not codeact_less(heap[child], heap[right]):
                child = right
            heap[pos] = heap[child]
            pos = child
            child = 2 * pos + 1
        heap[pos] = item
        self._siftdown(heap, start, pos)


class codeact_StringIO:
    """``io.StringIO``: write, getvalue, read, readline, readlines, iteration, seek(0), ``with``."""

    def __init__(self, initial: str = "", newline: Any = "\n") -> None:  # noqa: ARG002 - io.StringIO's
        self.parts = [initial] if initial else []
        self.at = 0
        self.closed = False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("string argument expected, got '" + type(text).__name__ + "'")
        self.parts.append(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def getvalue(self) -> str:
        value = "".join(self.parts)
        self.parts = [value] if value else []
        return value

    def read(self, size: int = -1) -> str:
        value = self.getvalue()
        end = len(value) if size is None or size < 0 else self.at + size
        chunk = value[self.at:end]
        self.at = min(end, len(value))
        return chunk

    def readline(self) -> str:
        value = self.getvalue()
        end = value.find("\n", self.at)
        end = len(value) if end < 0 else end + 1
        chunk = value[self.at:end]
        self.at = end
        return chunk

    def readlines(self) -> list[str]:
        return self.read().splitlines(True)

    def __iter__(self) -> Any:
        return iter(self.readlines())

    def seek(self, at: int, whence: int = 0) -> int:  # noqa: ARG002 - io.StringIO's
        self.at = at
        return at

    def tell(self) -> int:
        return self.at

    def truncate(self, size: Any = None) -> int:
        value = self.getvalue()[:self.at if size is None else size]
        self.parts = [value] if value else []
        return len(value)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closed = True


class codeact_io:
    """``io`` as far as programs use it: StringIO."""

    def __init__(self) -> None:
        self.StringIO = codeact_StringIO


class codeact_ChainMap:
    """``collections.ChainMap``: lookups through the maps in order; writes go to the first."""

    def __init__(self, *maps: Any) -> None:
        self.maps = list(maps) if maps else [{}]

    def __getitem__(self, key: Any) -> Any:
        for mapping in self.maps:
            if key in mapping:
                return mapping[key]
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        for mapping in self.maps:
            if key in mapping:
                return mapping[key]
        return default

    def __contains__(self, key: Any) -> bool:
        return any([key in mapping for mapping in self.maps])

    def __setitem__(self, key: Any, value: Any) -> None:
        self.maps[0][key] = value

    def keys(self) -> list[Any]:
        seen: dict[Any, None] = {}
        for mapping in reversed(self.maps):
            for key in mapping:
                seen[key] = None
        return list(seen)

    def __iter__(self) -> Any:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self) -> list[tuple[Any, Any]]:
        return [(key, self[key]) for key in self.keys()]

    def values(self) -> list[Any]:
        return [self[key] for key in self.keys()]

    def new_child(self, m: Any = None) -> Any:
        return codeact_ChainMap({} if m is None else m, *self.maps)

    def __repr__(self) -> str:
        return "ChainMap(" + ", ".join([repr(m) for m in self.maps]) + ")"


class codeact_Key:
    """What ``functools.cmp_to_key`` makes of one item."""

    def __init__(self, cmp: Any, obj: Any) -> None:
        self.cmp = cmp
        self.obj = obj

    def __lt__(self, other: Any) -> bool:
        return bool(self.cmp(self.obj, other.obj) < 0)


def codeact_cmp_to_key(cmp: Any) -> Any:
    """``functools.cmp_to_key``: sorted/min/max through :func:`codeact_sorted` call ``__lt__``."""
    return lambda obj: codeact_Key(cmp, obj)


def codeact_total_ordering(cls: Any) -> Any:
    """``functools.total_ordering``: :func:`codeact_cmp` derives the other comparisons from ``__lt__``."""
    return cls


codeact_TypedDict = dict  # a TypedDict's instances are dicts
