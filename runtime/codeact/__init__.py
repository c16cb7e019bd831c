"""codeact: run one sandboxed Python program that calls tools as functions, and print only the answer.

Public surface: :func:`run`, :class:`RunResult`, :class:`Limits`, :class:`CodeactError`.

Layout, one concern per subpackage, in layers from the base up: a module imports from its own layer or below
(tests/runtime/test_import_graph.py holds the order, the two arrows that run up and why, and keeps imports free of
cycles):

0. ``errors``, ``paths``, ``privatedir``, ``cmdline``, ``rundir``: leaves (the error hierarchy; home, Copilot's
   home, the XDG folders; private folders; the command line the client and server share; a run's folder).
   ``layout``: where the template puts things, per scope. ``enforcement``: the hooks' spec and their generator.
   ``frames``: the warm server's wire protocol. ``processes``: processes and threads as ``/proc`` shows them.
1. ``core``: what one run is made of: ``limits``, ``outputs``, ``stubs``, ``rewrite``, ``hints``, ``config`` (the
   stamped settings), ``boundary`` (the workspace boundary), ``secrets``, ``tool`` (what a tool is), ``catalog`` (the
   built-in tools' names and modules).
2. ``backends``: the sandboxes (``monty``, ``hyperlight``) and the choice between them, with hyperlight's checks
   (``precheck``, ``probe``). ``mcp``: MCP servers: configuration, discovery and lock, ``exposure`` (what is offered
   under which Python name), ``bindings`` (MCP tools as sandbox tools), ``sessions`` (opening one), ``session_pool`` (a run's
   sessions, on one event-loop thread), ``results`` (what a call returns, as plain data).
   ``providers``: live tools.
3. ``tools``: the built-in tools, the user's own (``user``) and the set a run offers (``assemble``).
4. ``runner``: the run loop (a backend, the assembled tools, the limits, the result).
5. ``server``: the warm server (``control``: its status, start and stop from outside); ``client``: its thin client
   (the launcher's entry); ``lifecycle``: the template's life in a repository (``update``, ``refresh``, ``drift``,
   ``links``, ``uninstall``, ``orgpolicy``, ``doctor``); ``bootstrap``: the launcher's slow path, run as
   ``python -S`` (standard library only).
6. ``cli``: the command line, one module per subcommand.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
TYPE_CHECKING = False  # not `typing`: the launcher's thin client imports this package

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .core.limits import Limits
    from .errors import CodeactError
    from .runner import RunResult, run

_LAZY = {"run": "runner", "RunResult": "runner", "Limits": "core.limits", "CodeactError": "errors"}


def __getattr__(name: str) -> object:  # imports stay lazy so `codeact` starts fast
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(name)


__all__ = ["run", "RunResult", "Limits", "CodeactError", "__version__"]
