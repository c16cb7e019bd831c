"""Prelude helpers for the program's own classes: comparisons, sorting, ``len``, dataclasses (see
codeact.core.prelude)."""
from __future__ import annotations

# Imports inside functions are lazy: this code runs inside the sandbox, where codeact_host (and re) are
# names the sandbox offers, not modules the host imports.
from typing import Any

# --------------------------------------------------------------------------------------------------- objects
# classes declared @dataclass(order=True), as "Name" or "Name-field-field" (the fields not compared): the rewrite
# sets it (codeact.core.prelude_edits)
codeact_ordered: tuple[str, ...] = ()
codeact_PATHS = ("PosixPath", "PurePosixPath", "Path", "PurePath", "WindowsPath")


def codeact_is_object(value: Any) -> bool:
    """Whether ``value`` is an instance of a class the program defined (not a built-in value)."""
    return hasattr(value, "__dataclass_fields__") or hasattr(value, "__lt__") or hasattr(value, "__gt__")


def codeact_order_of(value: Any) -> Any:
    """The fields an ordered dataclass compares, or ``None`` when ``value``'s class is not ordered."""
    name = type(value).__name__
    for entry in codeact_ordered:
        parts = entry.split("-")
        if parts[0] == name:
            return tuple([getattr(value, f) for f in value.__dataclass_fields__ if f not in parts[1:]])
    return None


def codeact_less(a: Any, b: Any) -> bool:
    """``a < b`` as CPython decides it: the class's ``__lt__`` (or ``b.__gt__``), dataclass(order=True)'s field
    tuples, paths by their parts, else the built-in comparison."""
    if hasattr(a, "__lt__"):
        return bool(a.__lt__(b))
    if hasattr(b, "__gt__"):
        return bool(b.__gt__(a))
    if type(a).__name__ == type(b).__name__ and codeact_order_of(a) is not None:
        return bool(codeact_order_of(a) < codeact_order_of(b))
    if type(a).__name__ in codeact_PATHS and type(b).__name__ in codeact_PATHS:
        return tuple(a.parts) < tuple(b.parts)
    if isinstance(a, tuple) and isinstance(b, tuple):
        for i in range(min(len(a), len(b))):
            if a[i] != b[i]:
                return codeact_less(a[i], b[i])
        return len(a) < len(b)
    return bool(a < b)


def codeact_cmp(a: Any, op: str, b: Any) -> bool:
    """``a <op> b`` for ``<``, ``>``, ``<=``, ``>=`` with the program's own comparison methods honoured."""
    if not (codeact_is_object(a) or codeact_is_object(b)):
        if op == "<":
            return bool(a < b)
        if op == ">":
            return bool(a > b)
        if op == "<=":
            return bool(a <= b)
        return bool(a >= b)
    method = {"<": "__lt__", ">": "__gt__", "<=": "__le__", ">=": "__ge__"}[op]
    if hasattr(a, method):
        return bool(getattr(a, method)(b))
    if op == "<":
        return codeact_less(a, b)
    if op == ">":
        return codeact_less(b, a)
    if op == "<=":
        return not codeact_less(b, a)
    return not codeact_less(a, b)


def codeact_merge_sort(pairs: list[Any], reverse: bool) -> list[Any]:
    """Stable merge sort of ``(key, item)`` pairs by :func:`codeact_less` on the keys (equal keys keep their order,
    with ``reverse`` too, as ``sorted`` does)."""
    if len(pairs) <= 1:
        return pairs
    middle = len(pairs) // 2
    left = codeact_merge_sort(pairs[:middle], reverse)
    right = codeact_merge_sort(pairs[middle:], reverse)
    out = []
    i = 0
    j = 0
    while i < len(left) and j < len(right):
        first = codeact_less(left[i][0], right[j][0]) if reverse else codeact_less(right[j][0], left[i][0])
        if (not reverse and first) or (reverse and first):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    return out + left[i:] + right[j:]


def codeact_sorted(values: Any, key: Any = None, reverse: bool = False) -> list[Any]:
    """``sorted()`` with the program's own comparison methods and paths honoured; the key called once per item,
    in order, from the program's code (so it may call tools)."""
    items = list(values)
    keys = items if key is None else [key(item) for item in items]
    plain = True
    for k in keys:
        if codeact_is_object(k) or type(k).__name__ in codeact_PATHS or (isinstance(k, tuple) and any(
                [codeact_is_object(part) or type(part).__name__ in codeact_PATHS for part in k])):
            plain = False
            break
    if plain:
        if key is None:
            return sorted(items, reverse=reverse)
        order = sorted(range(len(items)), key=lambda i: keys[i], reverse=reverse)
        return [items[i] for i in order]
    pairs = [(keys[i], items[i]) for i in range(len(items))]
    return [pair[1] for pair in codeact_merge_sort(pairs, reverse)]


def codeact_extreme(values: Any, key: Any, largest: bool, default: Any, has_default: bool, what: str) -> Any:
    items = list(values)
    if not items:
        if has_default:
            return default
        raise ValueError(what + "() iterable argument is empty")
    best = items[0]
    best_key = best if key is None else key(best)
    for item in items[1:]:
        k = item if key is None else key(item)
        if (codeact_less(best_key, k) if largest else codeact_less(k, best_key)):
            best = item
            best_key = k
    return best


def codeact_min(*values: Any, key: Any = None, **default: Any) -> Any:
    """``min()`` with the program's own ``__lt__`` honoured."""
    items = values[0] if len(values) == 1 else values
    return codeact_extreme(items, key, False, default.get("default"), "default" in default, "min")


def codeact_max(*values: Any, key: Any = None, **default: Any) -> Any:
    """``max()`` with the program's own ``__lt__`` honoured."""
    items = values[0] if len(values) == 1 else values
    return codeact_extreme(items, key, True, default.get("default"), "default" in default, "max")


def codeact_list_sort(values: Any, **options: Any) -> None:
    """``list.sort(key=..., reverse=...)`` in place through :func:`codeact_sorted`; any other object's own
    ``sort`` with the arguments as given."""
    if not isinstance(values, list):
        values.sort(**options)
        return
    ordered = codeact_sorted(values, options.get("key"), bool(options.get("reverse", False)))
    values.clear()
    values.extend(ordered)


def codeact_len(value: Any) -> int:
    """``len()`` with a class's ``__len__`` honoured."""
    if hasattr(value, "__len__") and not isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        return int(value.__len__())
    return len(value)


# --------------------------------------------------------------------------------------------------- dataclasses
class codeact_Field:
    """What ``dataclasses.fields`` gives for one field: its name and type (as written)."""

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.type = kind

    def __repr__(self) -> str:
        return "Field(name=" + repr(self.name) + ",type=" + self.type + ")"


def codeact_check_dataclass(value: Any, what: str) -> None:
    if not hasattr(value, "__dataclass_fields__"):
        raise TypeError(what + "() should be called on dataclass instances")


def codeact_value_of(value: Any, as_tuple: bool) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        parts = [(name, codeact_value_of(getattr(value, name), as_tuple)) for name in value.__dataclass_fields__]
        return tuple([p[1] for p in parts]) if as_tuple else dict(parts)
    if isinstance(value, list):
        return [codeact_value_of(v, as_tuple) for v in value]
    if isinstance(value, tuple):
        return tuple([codeact_value_of(v, as_tuple) for v in value])
    if isinstance(value, dict):
        return {codeact_value_of(k, as_tuple): codeact_value_of(v, as_tuple) for k, v in value.items()}
    return value


class codeact_dataclasses:
    """The parts of ``dataclasses`` the sandbox lacks (the rest is its own)."""

    def fields(self, value: Any) -> tuple[Any, ...]:
        codeact_check_dataclass(value, "fields")
        found = []
        for name in value.__dataclass_fields__:
            text = str(value.__dataclass_fields__[name])
            at = text.find("type=")
            kind = text[at + 5:text.find(",", at)].strip("'\"") if at >= 0 else ""
            found.append(codeact_Field(name, kind))
        return tuple(found)

    def asdict(self, value: Any) -> dict[str, Any]:
        codeact_check_dataclass(value, "asdict")
        return codeact_value_of(value, False)  # type: ignore[no-any-return]

    def astuple(self, value: Any) -> tuple[Any, ...]:
        codeact_check_dataclass(value, "astuple")
        return codeact_value_of(value, True)  # type: ignore[no-any-return]

    def replace(self, value: Any, **changes: Any) -> Any:
        codeact_check_dataclass(value, "replace")
        given = {name: getattr(value, name) for name in value.__dataclass_fields__}
        for name in changes:
            if name not in given:
                raise TypeError(type(value).__name__ + ".__init__() got an unexpected keyword argument " +
                                repr(name))
            given[name] = changes[name]
        return type(value)(**given)

    def is_dataclass(self, value: Any) -> bool:
        return hasattr(value, "__dataclass_fields__")


def codeact_vars(value: Any = None) -> dict[str, Any]:
    """``vars(obj)``: a dataclass's fields, or the attributes of another object of the program's classes (read on
    the host, which sees them; a copy, not the live ``__dict__``)."""
    if hasattr(value, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    import codeact_host

    return codeact_host.vars(value)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------- built-in callbacks
def codeact_map(function: Any, values: Any) -> list[Any]:
    """``map(f, xs)`` with ``f`` called from the program's code (so it may call tools): a built-in that calls a
    function back cannot let it suspend for a tool call in the sandbox."""
    return [function(value) for value in values]


def codeact_filter(function: Any, values: Any) -> list[Any]:
    """``filter(f, xs)``, as :func:`codeact_map`."""
    return [value for value in values if function(value)]


def codeact_next(values: Any, *default: Any) -> Any:
    """``next(x for x in ...)``: a generator expression is a list in the sandbox, so its first item."""
    if values:
        return values[0]
    if default:
        return default[0]
    return next(iter(values))


def codeact_lines(handle: Any) -> Any:
    """An open file as ``enumerate``/``zip``/``list`` see it in CPython: its lines (the sandbox iterates a file
    only in a ``for`` loop)."""
    if type(handle).__name__ == "TextIOWrapper":
        return handle.readlines()
    return handle


def codeact_newline(value: Any) -> Any:
    """``open(newline=...)``: the sandbox translates line endings always, so any choice but ``None`` is refused."""
    if value is None:
        return value
    raise ValueError("open(newline=...) is not supported here: text is read with universal newlines ('\\r\\n' "
                     "becomes '\\n'); to keep line endings read bytes, open(path, 'rb').read().decode()")


def codeact_relative_to(path: Any, base: Any) -> Any:
    """``Path.relative_to`` for the sandbox's paths, as CPython answers it; any other object's own."""
    if type(path).__name__ not in codeact_PATHS:
        return path.relative_to(base)
    text = str(path)
    root = str(base).rstrip("/")
    if str(base) in (".", ""):
        return path
    if text == str(base):
        return type(path)(".")
    if text.startswith(root + "/"):
        return type(path)(text[len(root) + 1:])
    return path.relative_to(base)


codeact_CALLABLE_TYPES = ("builtin_function_or_method", "function", "type", "partial", "method")


def codeact_callable(value: Any) -> bool:
    """``callable()``, which the sandbox lacks for built-in values."""
    return type(value).__name__ in codeact_CALLABLE_TYPES or hasattr(value, "__call__")  # noqa: B004 - no callable() here


# ------------------------------------------------------------------------------------------------- set order
def codeact_set_order(items: list[Any]) -> list[Any]:
    """The order CPython 3.11 iterates a set of ints built by adding ``items`` one by one (setobject.c's
    ``set_add_entry``, ``set_table_resize`` and ``set_insert_clean``; an int's hash is itself, -1 being -2)."""
    mask = 7
    table: list[Any] = [None] * 8
    fill = 0
    for item in items:
        code = -2 if item == -1 else int(item)
        i = code & mask
        perturb = code & 18446744073709551615
        placed = False
        added = False
        while not placed:
            probes = 9 if i + 9 <= mask else 0
            j = i
            while True:
                if table[j] is None:
                    table[j] = (code, item)
                    fill += 1
                    placed = True
                    added = True
                    break
                if table[j][0] == code and table[j][1] == item:
                    placed = True  # already there: CPython keeps the first key
                    break
                if probes == 0:
                    break
                probes -= 1
                j += 1
            if not placed:
                perturb = perturb >> 5
                i = (i * 5 + 1 + perturb) & mask
        if added and fill * 5 >= mask * 3:
            table = codeact_set_resize(table)
            mask = len(table) - 1
            fill = len([e for e in table if e is not None])
    return [e[1] for e in table if e is not None]


def codeact_set_resize(table: list[Any]) -> list[Any]:
    """CPython's ``set_table_resize``: the entries moved, in table order, into a table 4 times the used size."""
    old = [e for e in table if e is not None]
    used = len(old)
    size = 8
    while size <= (used * 2 if used > 50000 else used * 4):
        size = size * 2
    mask = size - 1
    new: list[Any] = [None] * size
    for entry in old:
        k = entry[0] & mask
        perturb = entry[0] & 18446744073709551615
        while new[k] is not None:
            found = -1
            if k + 9 <= mask:
                for step in range(1, 10):
                    if new[k + step] is None:
                        found = k + step
                        break
            if found >= 0:
                k = found
                break
            perturb = perturb >> 5
            k = (k * 5 + 1 + perturb) & mask
        new[k] = entry
    return new


def codeact_set(*values: Any) -> Any:
    """``set(iterable)`` (and a set comprehension) that iterates as CPython's does: a set of ints is built in
    CPython's order (the sandbox's sets keep the order items were added); any other set, or one of more than
    200,000 items (the order is worked out item by item), as the sandbox builds it."""
    if not values:
        return set()
    items = list(values[0])
    if 0 < len(items) <= 200000 and all([type(v).__name__ in ("int", "bool") and -4611686018427387904 < v < 4611686018427387904
                      for v in items]):
        return set(codeact_set_order(items))
    return set(items)
