"""Prelude stand-ins for standard modules the sandbox lacks that keep state or change their arguments in
place: heapq, io.StringIO, ChainMap, cmp_to_key, total_ordering, TypedDict (see codeact.core.prelude)."""
from __future__ import annotations

# Imports inside functions are lazy: this code runs inside the sandbox, where codeact_host (and re) are
# names the sandbox offers, not modules the host imports.
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


class codeact_SectionProxy:
    """``parser[section]``: its options (the defaults beneath them), read like a dict."""

    def __init__(self, parser: Any, name: str) -> None:
        self.parser = parser
        self.name = name

    def __getitem__(self, option: str) -> Any:
        if not self.parser.has_option(self.name, option):
            raise KeyError(option)
        return self.parser.get(self.name, option)

    def get(self, option: str, fallback: Any = None) -> Any:
        return self.parser.get(self.name, option, fallback=fallback)

    def getint(self, option: str, fallback: Any = None) -> Any:
        return self.parser.getint(self.name, option, fallback=fallback)

    def getboolean(self, option: str, fallback: Any = None) -> Any:
        return self.parser.getboolean(self.name, option, fallback=fallback)

    def __contains__(self, option: str) -> bool:
        return bool(self.parser.has_option(self.name, option))

    def keys(self) -> list[str]:
        return list(self.parser.options(self.name))

    def __iter__(self) -> Any:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self) -> list[tuple[str, Any]]:
        return [(key, self[key]) for key in self.keys()]

    def values(self) -> list[Any]:
        return [self[key] for key in self.keys()]


codeact_MISSING = ("codeact", "missing")


class codeact_ConfigParser:
    """``configparser.ConfigParser`` over text CPython's own parser reads on the host (values interpolated)."""

    def __init__(self, defaults: Any = None, **_options: Any) -> None:
        self.default_values: dict[str, Any] = {} if defaults is None else dict(defaults)
        self.data: dict[str, dict[str, Any]] = {}

    def read_string(self, text: str, source: str = "<string>") -> None:
        import codeact_host

        found = codeact_host.configparse(text, self.default_values)
        self.default_values = found[0]
        for pair in found[1]:
            if pair[0] in self.data and source == "<string>":
                raise ValueError("While reading from '<string>': section " + repr(pair[0]) + " already exists")
            merged = self.data.get(pair[0], {})
            merged.update(pair[1])
            self.data[pair[0]] = merged

    def read(self, filenames: Any, encoding: Any = None) -> list[str]:  # noqa: ARG002 - ConfigParser.read's
        names = [filenames] if isinstance(filenames, str) or hasattr(filenames, "parts") else list(filenames)
        done = []
        for name in names:
            try:
                with open(name) as handle:
                    text = handle.read()
            except (FileNotFoundError, IsADirectoryError, PermissionError):
                continue
            self.read_string(text, str(name))
            done.append(str(name))
        return done

    def read_file(self, handle: Any, source: Any = None) -> None:
        self.read_string(handle.read(), "<file>" if source is None else source)

    def sections(self) -> list[str]:
        return list(self.data)

    def has_section(self, section: str) -> bool:
        return section in self.data

    def has_option(self, section: str, option: str) -> bool:
        key = option.lower()
        if section in ("DEFAULT", "") or section not in self.data:
            return section in ("DEFAULT", "") and key in self.default_values
        return key in self.data[section] or key in self.default_values

    def options(self, section: str) -> list[str]:
        if section not in self.data:
            raise KeyError("No section: " + repr(section))
        return list(self.data[section]) + [k for k in self.default_values if k not in self.data[section]]

    def get(self, section: str, option: str, raw: bool = False, vars: Any = None,  # noqa: A002,ARG002 - its
            fallback: Any = codeact_MISSING) -> Any:
        key = option.lower()
        if section not in self.data and section != "DEFAULT":
            if fallback is not codeact_MISSING:
                return fallback
            raise KeyError("No section: " + repr(section))
        values = self.data.get(section, {})
        if key in values:
            return values[key]
        if key in self.default_values:
            return self.default_values[key]
        if fallback is not codeact_MISSING:
            return fallback
        raise KeyError("No option " + repr(key) + " in section: " + repr(section))

    def getint(self, section: str, option: str, fallback: Any = codeact_MISSING, **_kw: Any) -> Any:
        value = self.get(section, option, fallback=fallback)
        return value if value is fallback else int(value)

    def getfloat(self, section: str, option: str, fallback: Any = codeact_MISSING, **_kw: Any) -> Any:
        value = self.get(section, option, fallback=fallback)
        return value if value is fallback else float(value)

    def getboolean(self, section: str, option: str, fallback: Any = codeact_MISSING, **_kw: Any) -> Any:
        value = self.get(section, option, fallback=fallback)
        if value is fallback:
            return value
        word = str(value).lower()
        if word in ("1", "yes", "true", "on"):
            return True
        if word in ("0", "no", "false", "off"):
            return False
        raise ValueError("Not a boolean: " + str(value))

    def items(self, section: Any = None) -> list[Any]:
        if section is None:
            return [(name, codeact_SectionProxy(self, name)) for name in ["DEFAULT", *self.data]]
        return [(key, self.get(section, key)) for key in self.options(section)]

    def defaults(self) -> dict[str, Any]:
        return dict(self.default_values)

    def __getitem__(self, section: str) -> Any:
        if section != "DEFAULT" and section not in self.data:
            raise KeyError(section)
        return codeact_SectionProxy(self, section)

    def __contains__(self, section: str) -> bool:
        return section in self.data or section == "DEFAULT"

    def __iter__(self) -> Any:
        return iter(["DEFAULT", *self.data])


class codeact_configparser:
    """``configparser`` as far as programs use it."""

    def __init__(self) -> None:
        self.ConfigParser = codeact_ConfigParser
        self.RawConfigParser = codeact_ConfigParser
        self.Error = ValueError


class codeact_ParseResult:
    """What ``urlparse``/``urlsplit`` give: the fields by name and by index, and the host's properties."""

    def __init__(self, parts: dict[str, Any]) -> None:
        self.parts = list(parts["fields"])
        for i in range(len(parts["names"])):
            setattr(self, parts["names"][i], parts["fields"][i])
        self.hostname = parts["hostname"]
        self.port = parts["port"]
        self.username = parts["username"]
        self.password = parts["password"]
        self.url = parts["url"]

    def geturl(self) -> str:
        return str(self.url)

    def __getitem__(self, index: int) -> Any:
        return self.parts[index]

    def __iter__(self) -> Any:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def __eq__(self, other: object) -> bool:
        return bool(list(self.parts) == list(other))  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return "ParseResult(" + ", ".join([repr(p) for p in self.parts]) + ")"


def codeact_urlparse(url: str, scheme: str = "", allow_fragments: bool = True) -> Any:
    """``urllib.parse.urlparse``: CPython's answer, as an object with its attributes."""
    import codeact_host

    return codeact_ParseResult(codeact_host.urlparts(url, "urlparse", scheme, allow_fragments))


def codeact_urlsplit(url: str, scheme: str = "", allow_fragments: bool = True) -> Any:
    """``urllib.parse.urlsplit``: CPython's answer, as an object with its attributes."""
    import codeact_host

    return codeact_ParseResult(codeact_host.urlparts(url, "urlsplit", scheme, allow_fragments))


class codeact_Template:
    """``string.Template``: ``$name``, ``${name}`` and ``$$``."""

    def __init__(self, template: str) -> None:
        self.template = template

    def codeact_fill(self, mapping: Any, keywords: dict[str, Any], safe: bool) -> str:
        import re as codeact_re

        values = dict(mapping) if mapping is not None else {}
        values.update(keywords)
        text = self.template
        out = []
        last = 0
        for match in codeact_re.finditer(r"\$(?:(\$)|([_a-zA-Z][_a-zA-Z0-9]*)|\{([_a-zA-Z][_a-zA-Z0-9]*)\}|())",
                                         text):
            out.append(text[last:match.start()])
            last = match.end()
            name = match.group(2) or match.group(3)
            if match.group(1):
                out.append("$")
            elif name is not None and name in values:
                out.append(str(values[name]))
            elif safe:
                out.append(match.group(0))
            elif name is not None:
                raise KeyError(name)
            else:
                line = text[:match.start()].count("\n") + 1
                raise ValueError("Invalid placeholder in string: line " + str(line) + ", col " + str(
                    match.start() - text.rfind("\n", 0, match.start())))
        out.append(text[last:])
        return "".join(out)

    def substitute(self, mapping: Any = None, **keywords: Any) -> str:
        return self.codeact_fill(mapping, keywords, False)

    def safe_substitute(self, mapping: Any = None, **keywords: Any) -> str:
        return self.codeact_fill(mapping, keywords, True)


def codeact_set_method(value: Any, name: str, *others: Any) -> Any:
    """``s.union(a, b, ...)`` and the other set methods with several arguments (the sandbox takes one)."""
    for other in others:
        if name == "union":
            value = value.union(other)
        elif name == "intersection":
            value = value.intersection(other)
        elif name == "difference":
            value = value.difference(other)
        else:
            value = value.symmetric_difference(other)
    return value


def codeact_set_call(name: str) -> Any:
    """``set.intersection`` (and the other set methods) taken from the type: ``set.intersection(*sets)``."""
    def call(first: Any, *others: Any) -> Any:
        return codeact_set_method(first, name, *others)
    return call
