"""The tools of one run as one mapping: the run's own, and a large shared set that costs the run only what it uses.

A run offers its built-in, user and live tools (a few, bound to the run) and the MCP tools of a lock (up to thousands,
built once per lock: :mod:`codeact.mcp.bindings`, each bound to the run's session pool when the run first uses it).
:class:`ToolSet` puts them together without copying the shared set, and keeps its namespaces (``server`` of
``server.tool``) with it, so that nothing a run does walks every tool configured.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from .tool import Tool


def group(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The dotted names grouped by namespace: ``{"server": ("tool", ...)}``."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if "." in name:
            space, member = name.split(".", 1)
            groups.setdefault(space, []).append(member)
    return {space: tuple(members) for space, members in groups.items()}


class ToolSet(Mapping[str, Tool]):
    """``own`` tools (a dict) before ``shared`` ones, whose dotted names are grouped in ``spaces`` and whose other
    names are ``top``. A shared tool is hidden by an own tool of its name or of its namespace's name, as a dict merge
    that skips such names would do."""

    def __init__(self, own: dict[str, Tool], shared: Mapping[str, Tool], spaces: Mapping[str, tuple[str, ...]],
                 top: tuple[str, ...]) -> None:
        self.own, self.shared, self._shared_spaces, self._shared_top = own, shared, spaces, top
        self._spaces: dict[str, tuple[str, ...]] | None = None

    def hides(self, name: str) -> bool:
        """Whether an own tool hides the shared tool ``name``."""
        return name in self.own or name.split(".", 1)[0] in self.own

    def __getitem__(self, name: str) -> Tool:
        tool = self.own.get(name)
        if tool is not None:
            return tool
        if self.hides(name):
            raise KeyError(name)
        return self.shared[name]

    def get(self, name: str, default: Tool | None = None) -> Tool | None:  # type: ignore[override]
        """The tool ``name``, else ``default``: looked up twice at every call a program makes, so in one step
        rather than the inherited ``get``'s call of ``__getitem__`` (and its KeyError for a name not offered)."""
        tool = self.own.get(name)
        if tool is not None:
            return tool
        if self.hides(name):
            return default
        return self.shared.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self.own or (isinstance(name, str) and name in self.shared and not self.hides(name))

    def __iter__(self) -> Iterator[str]:
        yield from self.own
        yield from (name for name in self.shared if not self.hides(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def add(self, tool: Tool) -> None:
        """Offer ``tool`` as one of the run's own (a live provider's, given when no offered name clashes)."""
        self.own[tool.name] = tool
        self._spaces = None

    def namespaces(self) -> Mapping[str, tuple[str, ...]]:
        """The dotted tools by namespace (made once per run, from the shared set's own grouping)."""
        if self._spaces is None:
            spaces = {space: members for space, members in self._shared_spaces.items() if space not in self.own}
            for space, members in group(self.own).items():
                spaces[space] = spaces.get(space, ()) + members
            self._spaces = spaces
        return self._spaces

    def named_in(self, code: str) -> list[Tool]:
        """As :func:`named_in`: a namespace's tools are looked at only when ``code`` holds its name."""
        found = [tool for name, tool in self.own.items() if "." not in name and name in code]
        found += [self.shared[name] for name in self._shared_top if name in code and not self.hides(name)]
        for space, members in self.namespaces().items():
            if space in code:
                found += [self[f"{space}.{member}"] for member in members]
        return found


def namespaces(tools: Mapping[str, Tool]) -> Mapping[str, tuple[str, ...]]:
    """The dotted tools of ``tools`` (MCP: ``server.tool``) by namespace; kept by a :class:`ToolSet`."""
    return tools.namespaces() if isinstance(tools, ToolSet) else group(tools)


def offers(tools: Mapping[str, Tool], name: str) -> bool:
    """Whether a program may use ``name`` for ``tools``: a tool's name, or a namespace of tools."""
    return name in tools or name in namespaces(tools)


def named_in(tools: Mapping[str, Tool], code: str) -> list[Tool]:
    """The tools whose name (a dotted tool's namespace) ``code`` holds anywhere: those a run may call."""
    if isinstance(tools, ToolSet):
        return tools.named_in(code)
    return [tool for name, tool in tools.items() if name.split(".", 1)[0] in code]


__all__ = ["ToolSet", "group", "named_in", "namespaces", "offers"]
