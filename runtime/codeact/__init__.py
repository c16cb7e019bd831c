"""codeact: run one sandboxed Python program that calls tools as functions, and print only the answer.

Public surface: :func:`run`, :class:`RunResult`, :class:`Limits`, :class:`CodeactError`.

Layout, one concern per subpackage (tests/runtime/test_import_graph.py keeps the imports free of cycles):

- ``errors``, ``paths``: leaves (the error hierarchy; home, Copilot's home, the XDG folders).
- ``bootstrap``: the launcher's slow path, run as ``python -S`` (standard library only).
- ``core``: one run: ``runner``, ``limits``, ``outputs``, ``stubs``, ``rewrite``, ``hints``, ``config`` (the stamped
  settings), ``policy`` (the workspace boundary), ``secrets``.
- ``backends``: the sandboxes (``monty``, ``hyperlight``) and the choice between them, with hyperlight's checks
  (``precheck``, ``probe``).
- ``tools``: the built-in tools, their catalog (``builtin``), the user's own (``user``) and the set a run offers
  (``assemble``).
- ``mcp``: MCP servers: configuration, discovery and lock, ``exposure`` (what is offered under which Python name),
  ``bindings`` (MCP tools as sandbox tools), the client.
- ``lifecycle``: the template's life in a repository: ``layout``, ``update``, ``refresh``, ``drift``, ``links``,
  ``uninstall``, ``orgpolicy``.
- ``enforcement``: the hooks' spec and their generator.
- ``cli``: the command line, one module per subcommand.
"""
TYPE_CHECKING = False  # not `typing`: the launcher's thin client imports this package, ~10 ms less

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .errors import CodeactError
    from .core.limits import Limits
    from .core.runner import RunResult, run

_LAZY = {"run": "core.runner", "RunResult": "core.runner", "Limits": "core.limits", "CodeactError": "errors"}


def __getattr__(name: str) -> object:  # imports stay lazy so `codeact` starts fast
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(name)


__all__ = ["run", "RunResult", "Limits", "CodeactError", "__version__"]
