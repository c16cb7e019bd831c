"""The guest half of the hyperlight backend: this file's text runs INSIDE the sandbox, before each program.

``codeact.backends.hyperlight`` appends generated tool functions (``def view(*, path, ...)`` calling ``_call``) and
one ``_run(...)`` call, and the sandbox executes the whole. ``_run`` compiles the program under the file name
``<program>`` (so error lines are the program's own, with no offset to undo) in a fresh namespace holding only the
tool functions, runs it, and sends the last expression's value or the error, with the printed output, to the host
through the ``codeact_finish`` tool. Tool calls travel as JSON through the sandbox's ``call_tool``; the host answers
``{"value": ...}`` or ``{"error": {"type", "args"}}``, raised here as the same built-in exception, so a program catches
``FileNotFoundError`` from ``view`` exactly as on monty.

Runs on the guest's CPython (3.14, a frozen subset of the stdlib) and, in tests, on the host's: stdlib only.
Everything printed so far goes to the host with each tool call, so output survives a run killed at its deadline.
"""
import builtins as _builtins
import json as _json
import sys as _sys

TYPE_CHECKING = False  # not `typing` (the guest's stdlib is small); type checkers read this as True
if TYPE_CHECKING:
    from typing import Any

    def call_tool(name: str, *, payload: str) -> Any:
        """The sandbox's own host-call function, a global the sandbox provides: the host's JSON reply."""

_UNSET = object()  # "argument not given": the host then applies the tool's own default
_OUT = _sys.stdout  # the sandbox collects printed output here (an io.StringIO)
_state = {"sent": 0}
_FINISH = "codeact_finish"
_NO_OS = ("{}: the sandbox has no direct file, environment or network access; use the tools (view, create, edit, "
          "glob, grep, ...) instead")


def _take_output():
    """What the program printed since the last call."""
    getvalue = getattr(_OUT, "getvalue", None)
    if getvalue is None:
        return ""
    text = getvalue()
    new = text[_state["sent"]:]
    _state["sent"] = len(text)
    return new


def _plain(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"a {type(value).__name__} cannot be passed to a tool; pass str, int, float, bool, None, "
                    "list or dict")


def _rebuild(error):
    """The host's exception as the same built-in class (RuntimeError for anything else)."""
    cls = getattr(_builtins, str(error.get("type")), None)
    args = error.get("args") or [error.get("message", "")]
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = RuntimeError
    try:
        return cls(*args)
    except Exception:  # a class whose constructor wants other arguments (UnicodeDecodeError, ...)
        return RuntimeError(*args)


def _call(registered, args, kwargs):
    """Call host tool ``registered`` with the keyword arguments given (positional ones go too: the host refuses
    them with the same message as on monty)."""
    given = {k: v for k, v in kwargs.items() if v is not _UNSET}
    sent = _state["sent"]
    try:
        payload = _json.dumps({"args": list(args), "kwargs": given, "stdout": _take_output()}, default=_plain)
    except (TypeError, ValueError):
        _state["sent"] = sent  # nothing was sent: keep the output for the next call
        raise
    reply = call_tool(registered, payload=payload)
    if isinstance(reply, str):  # a host that answered with JSON text
        reply = _json.loads(reply)
    if "error" in reply:
        raise _rebuild(reply["error"])
    return reply.get("value")


class _Namespace:
    """An MCP server's tools as attributes: ``github.search_issues(query=...)``."""

    def __init__(self, server, tools):
        object.__setattr__(self, "_server", server)
        self.__dict__.update(tools)

    def __getattr__(self, name):
        tools = ", ".join(sorted(k for k in self.__dict__ if k != "_server"))
        raise AttributeError(f"{self._server} has no tool {name!r}; its tools: {tools}")

    def __repr__(self):
        return f"<tools of {self._server}>"


def _no_open(*_args, **_kwargs):
    raise PermissionError(_NO_OS.format("open"))


def _line(exc):
    """The line of the program where ``exc`` was raised (its innermost frame in ``<program>``)."""
    if isinstance(exc, SyntaxError) and exc.filename == "<program>":
        return exc.lineno
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<program>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _encode(value):
    try:
        return {"json": _json.dumps(value)}
    except Exception:
        try:
            return {"repr": repr(value)}
        except Exception as exc:
            return {"repr": f"<unrepresentable {type(value).__name__}: {exc}>"}


def _run(source, has_value, tools, recursion):
    """Run the program ``source`` with ``tools`` in scope and report the outcome to the host."""
    namespace = {"__name__": "__main__", "__builtins__": _builtins, "open": _no_open}
    namespace.update(tools)
    outcome = {}
    try:
        _sys.setrecursionlimit(max(100, min(_sys.getrecursionlimit(), recursion + 25)))
        exec(compile(source, "<program>", "exec", dont_inherit=True), namespace)
        if has_value:
            outcome["value"] = _encode(namespace.get("__codeact_value__"))
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the host reports it as the program's error
        try:  # a KeyError shows its key unquoted, as monty shows it
            message = str(exc.args[0]) if isinstance(exc, KeyError) and len(exc.args) == 1 else str(exc)
        except Exception:
            message = repr(exc)
        outcome["error"] = {"type": type(exc).__name__, "message": message, "line": _line(exc)}
    outcome["stdout"] = _take_output()
    call_tool(_FINISH, payload=_json.dumps(outcome))
