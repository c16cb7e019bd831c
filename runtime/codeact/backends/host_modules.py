"""Standard modules the sandbox lacks, served by CPython on the host, each call bounded like a tool.

``import statistics`` in a program gets a namespace whose functions are host calls: the arguments cross as plain
data, CPython's own function computes the answer, and it crosses back. Only pure functions of plain data are here
(and ``glob``, which reads the workspace inside it only: codeact.backends.confined_glob): nothing that would hand the
sandbox a host object or a callback. Modules with classes or in-place changes (heapq, io.StringIO, ChainMap, ...)
live in the sandbox instead (codeact.core.prelude).

Every call is bounded in memory and time as a tool is: :func:`_work` bounds from the arguments alone what the
call will make or go through, counting the parameters that multiply it (``statistics.quantiles(n=10**9)`` makes a
billion cut points, ``pprint``'s ``indent`` and ``textwrap``'s ``tabsize`` pad every line, ``urlencode(doseq=True)``
repeats a key per value, ``difflib.ndiff`` compares the characters of every pair of lines, a regular expression
costs far more than its text, and CPython's own code that is quadratic in one argument counts its square:
``textwrap``'s cut of a word longer than a line, ``pprint``'s wrap of a long string, ``shlex.split``'s token grown
a character at a time, ``dedent``'s margin compiled as a pattern). The bound is an upper bound of the worst case:
where it cannot be one the call goes to the child. Only a call whose bound is small runs here; any other runs in a child Python
(:func:`_in_child`) with the run's memory limit as its address-space limit, killed at the run's deadline; one whose
own output could not fit the run's memory is refused before it starts. CPython's caches that a call here fills
(fnmatch's, re's, urllib.parse's) are emptied of a program's long values after it, so nothing stays on the warm
server.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import time

TYPE_CHECKING = False  # not `typing`: the child Python (:func:`_in_child`) loads this file alone, and fast
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.boundary import Workspace

_STATISTICS = ("mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low", "median_high",
               "median_grouped", "mode", "multimode", "quantiles", "pstdev", "pvariance", "stdev", "variance")
# module -> its functions served here; the functions' names in CPython's module are the same
_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "statistics": _STATISTICS,
    "fnmatch": ("fnmatch", "fnmatchcase", "filter", "translate"),
    "textwrap": ("wrap", "fill", "shorten", "dedent", "indent"),
    "shlex": ("split", "quote", "join"),
    "html": ("escape", "unescape"),
    "urllib.parse": ("quote", "quote_plus", "unquote", "unquote_plus", "urlencode", "parse_qs", "parse_qsl",
                     "urljoin", "urldefrag"),
    "difflib": ("unified_diff", "context_diff", "ndiff", "get_close_matches"),
    "pprint": ("pformat", "pprint", "pp", "saferepr", "isreadable", "isrecursive"),
    "string": ("capwords",),
    # what the sandbox prelude's stand-ins (codeact.core.prelude) ask of CPython
    "codeact_host": ("vars", "configparse", "urlparts"),
}
_CONSTANTS: dict[str, tuple[str, ...]] = {
    "string": ("ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits",
               "punctuation", "printable", "whitespace"),
}
_GENERATORS = {"difflib.unified_diff", "difflib.context_diff", "difflib.ndiff"}  # CPython gives an iterator: a list
IN_PROCESS_WORK = 2_000_000  # a call bounded to more steps (items, characters, compared pairs) runs in a child
_PATTERN_STEPS = 16  # steps counted per character of a pattern: compiling one costs far more than reading it
_STAR_STEPS = 64  # and per `*` more (each becomes a group the expression tries at every position)
_PAIR_STEPS = 16  # steps counted per pair of lines or characters difflib compares
# steps counted per float a statistics function goes through: its exact ratio and big-int sums in a Python loop
# (pstdev: 1.9 us a float with spread exponents against 0.36 us a small int, CPython 3.11, x 5.3; margin to 8)
_FLOAT_STEPS = 8
# steps counted per character shlex.split reads: its lexer is a Python loop over them (0.6-1.0 us a character on 2
# shared cores: 2,000,000 characters of short tokens took 1.2-2.1 s, past faulthandler's backstop at the limit + 1.8 s
# for a call started just before the deadline; at 4, 500,000 characters, about 0.5 s)
_SHLEX_STEPS = 4
_CHILD_HEADROOM = 256 * 1024 * 1024  # a child Python's own address space, above the run's memory limit
# What the host holds of an answer, for each byte of its pickle: a float pickles to 9 bytes and is a 24-byte object,
# a list slot and its monty form again in the host (quantiles(n=4_000_000): 36 MB pickled, 781 MiB in the host)
_HOST_BYTES_PER_PICKLED = 12
_HOST_BYTES_PER_ITEM = 100  # the same for each item an answer is made of, counted before the call


class HostModules:
    """The host modules of one run: ``members(module)`` for an import, ``call("module.func", args, kwargs)``.

    ``memory`` (bytes) and ``timeout`` (seconds, from now) bound every call, as the run's limits bound a tool;
    ``on_print`` receives what ``pprint.pprint`` prints."""

    def __init__(self, workspace: Workspace | None, *, memory: int = 256 * 1024 * 1024, timeout: float = 30.0,
                 on_print: Callable[[str], None] | None = None) -> None:
        self.workspace = workspace
        self.memory = memory
        self.deadline = time.monotonic() + timeout
        self.on_print = on_print

    def members(self, module: str) -> tuple[str, ...] | None:
        """The names an ``import module`` gets (functions and constants), or ``None`` when not served here."""
        if module == "glob":
            return ("glob", "iglob", "escape", "has_magic") if self.workspace is not None else None
        if module == "urllib":
            return ("parse",)
        functions = _FUNCTIONS.get(module)
        return None if functions is None else functions + _CONSTANTS.get(module, ())

    def constants(self, module: str) -> dict[str, Any]:
        """The plain-data members of ``module`` (``string.digits``), by name."""
        import importlib

        names = _CONSTANTS.get(module, ())
        return {name: getattr(importlib.import_module(module), name) for name in names} if names else {}

    def handles(self, name: str) -> bool:
        module, _, member = name.rpartition(".")
        if module == "glob":
            return self.workspace is not None and member in ("glob", "iglob", "escape", "has_magic")
        return member in _FUNCTIONS.get(module, ())

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """CPython's ``name`` on the arguments, within the run's memory and time; raises what the program gets."""
        module, _, member = name.rpartition(".")
        if time.monotonic() >= self.deadline:
            raise TimeoutError(f"{name}() was not started: the run's time limit has passed")
        if module == "glob":
            return self._glob(member, args, kwargs)
        made, work = _work(name, args, kwargs)
        if made > self.memory:
            raise MemoryError(f"{name}() would make about {made:,} items or characters, more than the run's memory "
                              f"limit allows ({self.memory:,} bytes); ask for less")
        if work > IN_PROCESS_WORK:
            value = _in_child(name, args, kwargs, self.memory + _CHILD_HEADROOM, self.deadline,
                              answer=self.memory // _HOST_BYTES_PER_PICKLED)
        else:
            value = _call(name, args, kwargs)
        if name in ("pprint.pprint", "pprint.pp"):
            if self.on_print is not None:
                self.on_print(value)
            return None
        return value

    def _glob(self, member: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import glob

        from .confined_glob import GlobRefused
        from .confined_glob import glob as confined

        if member in ("escape", "has_magic"):
            return getattr(glob, member)(*args, **kwargs)
        assert self.workspace is not None
        pattern = args[0] if args else kwargs.pop("pathname", None)
        unknown = set(kwargs) - {"root_dir", "recursive", "include_hidden"}
        if not isinstance(pattern, str) or len(args) > 1 or unknown:
            raise TypeError(f"glob.{member}() takes a pattern (str) and root_dir=, recursive=, include_hidden= "
                            "here" + (f", not {', '.join(sorted(unknown))}" if unknown else ""))
        try:
            return confined(self.workspace, pattern, root_dir=kwargs.get("root_dir"),
                            recursive=bool(kwargs.get("recursive", False)),
                            include_hidden=bool(kwargs.get("include_hidden", False)), deadline=self.deadline,
                            matcher=lambda names, part: self.call("fnmatch.filter", (names, part), {}))
        except GlobRefused as exc:
            raise PermissionError(f"glob.{member}(): {exc}") from None


def _call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """CPython's function ``name`` on plain data, its answer made plain data (a list for an iterator or a
    statistics tuple; ``pprint.pprint``'s text, which the caller prints)."""
    import importlib

    module, _, member = name.rpartition(".")
    if name in ("pprint.pprint", "pprint.pp"):
        import pprint

        kwargs.pop("stream", None)
        return pprint.pformat(*args, **kwargs) + "\n"
    if module == "codeact_host":
        try:
            return _HOST_HELPERS[member](*args, **kwargs)
        finally:
            _forget_patterns("urllib.parse", args, kwargs)  # urlparts fills urlsplit's cache
    function: Callable[..., Any] = getattr(importlib.import_module(module), member)
    try:
        value = function(*args, **kwargs)
        if name in _GENERATORS:
            value = list(value)
    except ValueError as exc:  # statistics.StatisticsError: a class the sandbox does not know
        raise ValueError(str(exc)) from None
    finally:
        if module in ("fnmatch", "urllib.parse"):
            _forget_patterns(module, args, kwargs)
    return list(value) if isinstance(value, tuple) and module == "statistics" else value


def _vars(value: Any) -> dict[str, Any]:
    """``vars(obj)`` of an instance of the program's class: its attributes (the sandbox cannot list them)."""
    attributes = getattr(value, "attributes", None)
    if attributes is None:
        raise TypeError("vars() argument must have __dict__ attribute")
    return dict(attributes)


def _configparse(text: str, defaults: dict[str, Any] | None = None) -> list[Any]:
    """``text`` read by CPython's ``configparser.ConfigParser``: ``[defaults, [[section, {option: value}], ...]]``,
    each value interpolated as ``get`` would give it (the raw value where interpolation fails)."""
    import configparser

    parser = configparser.ConfigParser(defaults)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from None
    sections = []
    for section in parser.sections():
        values = {}
        for option in parser.options(section):
            try:
                values[option] = parser.get(section, option)
            except configparser.Error:
                values[option] = parser.get(section, option, raw=True)
        sections.append([section, values])
    return [dict(parser.defaults()), sections]


def _urlparts(url: str, kind: str = "urlparse", scheme: str = "", allow_fragments: bool = True) -> dict[str, Any]:
    """``urllib.parse.urlparse``/``urlsplit`` of ``url`` as plain data: its fields, and its properties."""
    from urllib import parse

    split = parse.urlsplit if kind == "urlsplit" else parse.urlparse
    found = split(url, scheme, allow_fragments)
    try:
        port = found.port
    except ValueError:
        port = None
    return {"fields": list(found), "names": list(found._fields), "hostname": found.hostname, "port": port,
            "username": found.username, "password": found.password, "url": found.geturl()}


_HOST_HELPERS: dict[str, Callable[..., Any]] = {"vars": _vars, "configparse": _configparse, "urlparts": _urlparts}


def _size(value: Any, budget: int) -> int:
    """Items and characters in ``value`` (plain data), counted up to just past ``budget``."""
    return _size_depth(value, budget)[0]


def _size_depth(value: Any, budget: int) -> tuple[int, int]:
    """:func:`_size`, and how deep ``value``'s containers nest (:func:`codeact.core.sizes.expanded_size`)."""
    try:
        from ..core.sizes import expanded_size
    except ImportError:  # the child loads this file alone (no package): core/sizes.py the same way
        import importlib.util
        from pathlib import Path

        spec = importlib.util.spec_from_file_location("codeact_sizes", Path(__file__).parent.parent / "core" / "sizes.py")
        assert spec is not None and spec.loader is not None
        sizes = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sizes)
        expanded_size = sizes.expanded_size
    return expanded_size(value, budget)


def _statistics_steps(size: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """A bound on the steps of a ``statistics`` function: CPython's ``_sum``/``_ss`` take each number's exact ratio
    in a Python loop and add it as big integers, so an int counts its machine words (the widest one's for every
    item: the partial sums grow to it) and a float :data:`_FLOAT_STEPS` (its ratio's denominator reaches 2**1074).
    Counted up to just past :data:`IN_PROCESS_WORK` items."""
    widest, floats, seen = 0, 0, 0
    for value in (*args, *kwargs.values()):
        for item in (value if isinstance(value, (list, tuple, set, frozenset, dict)) else (value,)):
            seen += 1
            if seen > IN_PROCESS_WORK:
                return IN_PROCESS_WORK + 1
            if type(item) is float:
                floats += 1
            elif isinstance(item, int):
                widest = max(widest, item.bit_length() >> 6)
    return size * max(1, widest) + floats * _FLOAT_STEPS


def _text_length(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(len(v) if isinstance(v, (str, bytes)) else 1 for v in value)
    return 1


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], at: int, name: str, default: Any) -> Any:
    return args[at] if len(args) > at else kwargs.get(name, default)


def _number(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _work(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """What ``name`` on these arguments makes and what it goes through, in items and characters, estimated before
    the call from the arguments' size and what the function multiplies it by."""
    budget = 1 << 40
    size = _size((args, kwargs), budget)
    if name == "statistics.quantiles":
        n = _number(kwargs.get("n", args[1] if len(args) > 1 else 4), 4)
        return size + max(n, 0) * _HOST_BYTES_PER_ITEM, size + max(n, 0)
    if name.startswith("statistics."):  # exact arithmetic (fractions) on big integers: their words squared
        return size, _statistics_steps(size, args, kwargs)
    if name.startswith("textwrap."):
        return _textwrap_work(name, size, args, kwargs)
    if name == "shlex.split":
        return size, size * _SHLEX_STEPS + _shlex_tokens(_argument(args, kwargs, 0, "s", ""))
    if name == "urllib.parse.urlencode":
        made = _urlencoded(_argument(args, kwargs, 0, "query", ()), bool(_argument(args, kwargs, 1, "doseq", False)))
        return size + made, size + made
    if name == "difflib.ndiff":  # every pair of lines may be compared character by character
        first, second = _argument(args, kwargs, 0, "a", ()), _argument(args, kwargs, 1, "b", ())
        chars = _text_length(first) * _text_length(second)
        return size * 4, size + chars * _PAIR_STEPS
    if name.startswith("difflib."):
        first, second = (list(args) + [kwargs.get("a", kwargs.get("word", "")),
                                       kwargs.get("b", kwargs.get("possibilities", ""))])[:2]
        pairs = (len(first) if isinstance(first, (list, str)) else 1) * (
            len(second) if isinstance(second, (list, str)) else 1)
        if name == "difflib.get_close_matches":  # the word's characters against each possibility's
            pairs = _text_length(first) * _text_length(second)
        return size * 4, size + pairs * _PAIR_STEPS
    if name.startswith("pprint."):
        # a line per item or character at most, each padded by `indent` per level of nesting
        at = 1 if name in ("pprint.pformat", "pprint.saferepr") else 2
        indent = max(_number(_argument(args, kwargs, at, "indent", 1), 1), 1) if name in (
            "pprint.pformat", "pprint.pprint", "pprint.pp") else 1
        value = args[0] if args else kwargs.get("object")
        depth = _size_depth(value, budget)[1]
        made = size * ((depth + 2) * indent + 8)
        if name in ("pprint.pformat", "pprint.pprint", "pprint.pp"):
            at = 2 if name == "pprint.pformat" else 3
            return made, made + _wrapped_strings(value, _argument(args, kwargs, at, "width", 80))
        return made, made
    if name == "codeact_host.configparse":
        return size * 2, size * 2 + _config_steps(_argument(args, kwargs, 0, "text", ""),
                                                  _argument(args, kwargs, 1, "defaults", None))
    if name.startswith("fnmatch."):  # a pattern is compiled to a regular expression: far more than its text
        pattern = _argument(args, kwargs, 1, "pat", "") if name != "fnmatch.translate" else _argument(
            args, kwargs, 0, "pat", "")
        if not isinstance(pattern, str):
            return size, size
        stars = pattern.count("*")
        names = 0 if name == "fnmatch.translate" else _text_length(
            _argument(args, kwargs, 0, "names" if name == "fnmatch.filter" else "name", ()))
        steps = len(pattern) * _PATTERN_STEPS + stars * _STAR_STEPS + names * (stars + 1)
        if "[" in pattern:  # sre compiles a class by walking each code point of its ranges
            import fnmatch

            from ..core.patterns import class_span

            steps += class_span(fnmatch.translate(pattern))
        return size, size + steps
    return size, size


_TEXTWRAP_MARGIN = r"(?m)^[ \t]+"  # a line's leading blanks: dedent's margin is the longest they share
_TEXTWRAP_BLANKS = "\t\n\x0b\x0c\r "  # textwrap's whitespace (ASCII)
_TEXTWRAP_RUN = r"[\t\n\x0b\x0c\r ]+|[^\t\n\x0b\x0c\r ]+"  # its chunks: runs of blanks, or between them (or longer)


def _longest(pattern: str, text: Any) -> int:
    import re

    return max((m.end() - m.start() for m in re.finditer(pattern, text)), default=0) if isinstance(text, str) else 0


def _long_words(text: Any, width: Any, kwargs: dict[str, Any], lines: Any = None) -> int:
    """The characters ``textwrap.wrap``/``fill``/``shorten`` copy breaking chunks longer than a line: CPython's
    ``_handle_long_word`` cuts one line off the chunk and keeps the rest as a new string, so a chunk of n characters
    on lines of w costs about n * n / w (n * n at ``width=1``, or where the indents leave a line no room); with
    ``max_lines`` (``shorten``: 1) no more lines than that are cut. A chunk is a word or, with
    ``drop_whitespace=False`` (or at the text's start), a run of blanks: every run counts, as long as it is once
    each tab is ``tabsize`` blanks (``'a' + '\t' * 20`` at ``tabsize=49_000`` is a run of 980,000)."""
    import re

    if not isinstance(text, str):
        return 0
    indents = [v for k, v in kwargs.items() if k.endswith("indent") and isinstance(v, str)]
    room = width - max(map(len, indents), default=0) if isinstance(width, int) and not isinstance(width, bool) else 1
    room = max(room, 1)
    tabsize = max(_number(kwargs.get("tabsize", 8), 8), 1)
    steps = 0
    for found in re.finditer(_TEXTWRAP_RUN, text):
        length = found.end() - found.start()
        if text[found.start()] in _TEXTWRAP_BLANKS:
            length += found.group().count("\t") * (tabsize - 1)
        if length > room:
            cuts = length // room + 1
            steps += length * (min(cuts, lines) if isinstance(lines, int) and lines > 0 else cuts)
            if steps > IN_PROCESS_WORK:
                break
    return steps


def _shlex_tokens(text: Any) -> int:
    """The characters ``shlex.split`` copies: it grows each token a character at a time (``token = token + c``,
    a new string each time), so a token of n characters costs n * n. A token is a run of non-blanks, or, once a
    quote or a backslash may join runs, up to the whole text."""
    import re

    if not isinstance(text, str):
        return 0
    if any(c in text for c in "'\"\\"):
        return len(text) * len(text)
    return sum((m.end() - m.start()) ** 2 for m in re.finditer(r"[^ \t\r\n]{64,}", text))


def _wrapped_strings(value: Any, width: Any) -> int:
    """The characters ``pprint`` goes through wrapping the strings and bytes in ``value``: CPython's
    ``_pprint_str`` grows a line word by word (a word and a blank run are parts) and takes ``repr`` of the line
    so far for every part (its ``_wrap_bytes_repr`` every 4 bytes): parts * min(width, n) characters for a string
    of n (``'a ' * 85_000`` at ``width=169_000``: 170,000 parts of up to 169,000 characters). Counted up to just
    past :data:`IN_PROCESS_WORK`."""
    import re

    wide = width if isinstance(width, int) and not isinstance(width, bool) and width > 0 else 1 << 62
    steps, stack, seen = 0, [value], 0
    while stack and steps <= IN_PROCESS_WORK and seen <= IN_PROCESS_WORK:
        item = stack.pop()
        seen += 1
        if isinstance(item, str):
            steps += (2 * sum(1 for _ in re.finditer(r"\s+", item)) + 1) * min(wide, len(item))
        elif isinstance(item, (bytes, bytearray)):
            steps += (len(item) // 4 + 1) * min(wide, len(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return steps


def _textwrap_work(name: str, size: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """:func:`_work` of a ``textwrap`` function."""
    if name == "textwrap.indent":
        text = args[0] if args else kwargs.get("text", "")
        prefix = args[1] if len(args) > 1 else kwargs.get("prefix", "")
        lines = text.count("\n") + 1 if isinstance(text, str) else 1
        made = size + lines * (len(prefix) if isinstance(prefix, str) else 1)
        return made, made
    if name in ("textwrap.wrap", "textwrap.fill", "textwrap.shorten"):
        # every tab becomes `tabsize` spaces first; every line may get the indents (a line per character at most)
        text = _argument(args, kwargs, 0, "text", "")
        tabs = text.count("\t") if isinstance(text, str) else 0
        expanded = size + tabs * max(_number(kwargs.get("tabsize", 8), 8), 0)
        indents = sum(len(v) for k, v in kwargs.items() if k.endswith("indent") and isinstance(v, str))
        made = expanded * (2 + indents)
        most = 1 if name == "textwrap.shorten" else kwargs.get("max_lines")  # shorten makes one line
        return made, made + _long_words(text, _argument(args, kwargs, 1, "width", 70), kwargs, most)
    if name == "textwrap.dedent":  # the common margin becomes a regular expression's text
        text = _argument(args, kwargs, 0, "text", "")
        return size, size + _PATTERN_STEPS * _longest(_TEXTWRAP_MARGIN, text)
    return size, size


def _config_steps(text: Any, defaults: Any = None) -> int:
    """The steps beyond its size reading ``text`` as a config (over ``defaults``) may take in the host.
    ``%(name)s`` may repeat a value in a value, ten levels deep: a factor no size of the text bounds (nine levels
    of four references make 4**9 copies), so a config that interpolates -- in its text or in its defaults, which
    every section's options include, each one interpolated -- is read in the child, limited in memory and time (as
    is one whose defaults hold anything but strings, numbers and None: ConfigParser writes each with ``str``).
    CPython's option pattern (``(?P<option>.*?)\\s*(?P<vi>=|:)...``) backtracks over a run of blanks at each place
    its lazy ``.*?`` stops: r blanks are r*r steps (100,000 on a line: minutes in C, the interpreter held), so long
    runs count as their square."""
    if not isinstance(text, str):
        return 0
    if "%(" in text or _interpolates(defaults):
        return IN_PROCESS_WORK + 1
    import re

    return sum((end - start) ** 2 for start, end in (m.span() for m in re.finditer(r"\s{16,}", text)))


def _interpolates(defaults: Any) -> bool:
    """Whether a config's ``defaults`` may interpolate (``%(`` in a key or value), or are not plain enough to tell."""
    if defaults is None:
        return False
    if not isinstance(defaults, dict):
        return True
    for item in (*defaults.keys(), *defaults.values()):
        if isinstance(item, str):
            if "%(" in item:
                return True
        elif item is not None and not isinstance(item, (int, float)):
            return True
    return False


def _urlencoded(query: Any, doseq: bool) -> int:
    """A bound on the characters ``urlencode`` makes: each pair quoted (a character up to 12 as ``%XX`` of its
    UTF-8), and with ``doseq`` the key once per value."""
    pairs = list(query.items()) if isinstance(query, dict) else list(query) if isinstance(query, (list, tuple)) else []
    total = 0
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            continue
        key, value = pair
        key_size = _size(key, 1 << 40)
        if doseq and isinstance(value, (list, tuple, set, frozenset)):
            total += len(value) * (key_size + 2) + _size(value, 1 << 40)
        else:
            total += key_size + _size(value, 1 << 40) + 2
    return total * 12


def _in_child(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], memory: int, deadline: float, *,
              answer: int | None = None) -> Any:
    """``name`` called in a child Python limited to ``memory`` bytes of address space and killed at ``deadline``.
    Its arguments and answer are plain data (pickled; the answer read back with no class allowed); an answer whose
    pickle is longer than ``answer`` bytes is refused (MemoryError), no more of it read than that, the child killed:
    unpickled, it would take the host about :data:`_HOST_BYTES_PER_PICKLED` times that."""
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    from ..processes import OutputTooLong, communicate_bounded

    boot = ("import sys, importlib.util as u; s = u.spec_from_file_location('codeact_host_call', sys.argv[1]); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); m.child()")  # this file alone: no package to import
    request = pickle.dumps((name, args, kwargs, memory), protocol=5)
    limit = answer if answer is not None else memory
    with subprocess.Popen([sys.executable, "-I", "-S", "-c", boot, str(Path(__file__).resolve())],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as child:
        try:  # read up to the bound only: past it the child is killed (capture_output would hold all it wrote)
            stdout, _ = communicate_bounded(child, limit, max(0.1, deadline - time.monotonic()), request)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{name}() was stopped at the run's deadline (the run's time limit; raise it with "
                               "--timeout, or ask for less)") from None
        except OutputTooLong:
            raise MemoryError(f"{name}() made an answer of more than {limit:,} bytes (pickled), more than the run's "
                              "memory limit holds once read (each small item takes ~100 bytes in the host); ask "
                              "for less") from None
        finally:
            if child.returncode is None:
                child.kill()
                child.wait()
    try:
        ok, value = _PlainUnpickler(stdout).load()
    except Exception:  # noqa: BLE001 - a child killed for memory leaves no answer
        raise MemoryError(f"{name}() needed more than the run's memory limit; ask for less") from None
    if not ok:
        kind, message = value
        raise (MemoryError if kind == "MemoryError" else ValueError if kind == "ValueError" else
               TypeError if kind == "TypeError" else RuntimeError)(message)
    return value


class _PlainUnpickler:
    """Reads plain data back from the child: any class or function reference is refused."""

    def __init__(self, data: bytes) -> None:
        import io
        import pickle

        class Plain(pickle.Unpickler):
            def find_class(self, module: str, name: str) -> Any:
                raise pickle.UnpicklingError(f"{module}.{name} is not plain data")

        self._unpickler = Plain(io.BytesIO(data))

    def load(self) -> Any:
        return self._unpickler.load()


def child() -> None:
    """The child's side of :func:`_in_child`: one request on stdin, one answer on stdout."""
    import pickle
    import sys

    name, args, kwargs, memory = pickle.loads(sys.stdin.buffer.read())
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):
        pass
    try:
        reply: tuple[bool, Any] = (True, _call(name, tuple(args), dict(kwargs)))
    except MemoryError:
        reply = (False, ("MemoryError", f"{name}() needed more than the run's memory limit; ask for less"))
    except Exception as exc:  # noqa: BLE001 - the program's to catch
        reply = (False, (type(exc).__name__, str(exc)))
    sys.stdout.buffer.write(pickle.dumps(reply, protocol=5))


_KEPT_PATTERNS = 256  # compiled fnmatch patterns the host keeps between calls
_LONG_PATTERN = 1024


def _forget_patterns(module: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """fnmatch and re cache every pattern they compile (fnmatch up to 32,768, each ~18x its text), urllib.parse
    its last 128 split URLs and ``safe=`` sets: on the warm server those caches live across runs, so a program's
    values must not stay there. Short ones are kept while few; a long one is dropped at once."""
    import fnmatch
    import re

    if module == "urllib.parse":
        if _size((args, kwargs), _LONG_PATTERN) > _LONG_PATTERN:
            import urllib.parse

            for cached in (getattr(urllib.parse, "urlsplit", None), getattr(urllib.parse, "_byte_quoter_factory", None)):
                if cached is not None and hasattr(cached, "cache_clear"):
                    cached.cache_clear()
        return
    long = any(isinstance(a, str) and len(a) > _LONG_PATTERN for a in (*args, *kwargs.values()))
    compiled = getattr(fnmatch, "_compile_pattern", None)
    if compiled is not None and hasattr(compiled, "cache_clear") and (
            long or compiled.cache_info().currsize > _KEPT_PATTERNS):
        compiled.cache_clear()
    if long:
        re.purge()


__all__ = ["HostModules"]
