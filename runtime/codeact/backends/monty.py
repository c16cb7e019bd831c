"""The pydantic-monty backend: a Rust interpreter of a Python subset in a worker process.

Tool calls are served by the manual ``feed_start``/``resume`` loop (the fastest host-call path Monty offers).
Anything the program asks of the OS (files, environment, imports Monty does not ship) is refused here.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import builtins
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..core.pathnames import quote
from ..core.toolset import namespaces, offers
from ..errors import BackendUnavailable, ErrorInfo, ProgramError
from .cpu import OneCpu
from .host_modules import HostModules
from .program import Program
from .sandbox_os import WorkspaceOS

try:
    import pydantic_monty as _pm
except ImportError as exc:  # pragma: no cover - exercised by doctor on a broken venv
    _pm = None  # type: ignore[assignment]
    _IMPORT_ERROR = exc

_BUILTIN_NAMES = frozenset(dir(builtins))


class MontyBackend:
    """Runs programs in pydantic-monty."""

    name = "monty"

    def __init__(self) -> None:
        if _pm is None:
            raise BackendUnavailable(
                f"pydantic-monty is not importable ({_IMPORT_ERROR}); re-run the launcher to re-sync "
                "its venv, or: pip install pydantic-monty==1.6.0")

    def execute(self, program: Program) -> Any:
        _refuse_huge(program.code)
        limits = program.limits
        monty_limits = {
            "max_feed_duration_secs": float(limits.timeout),
            "max_memory": int(limits.memory),
            "max_recursion_depth": int(limits.recursion),
            # every host call (tools, refused OS calls, name lookups) is a suspension; leave room above tool_calls
            "max_suspensions": int(limits.tool_calls) + 1000,
        }
        # the worker binary; the client's I/O threads (the checked-out session names its worker, warm pool or not:
        # no /proc scan for it)
        cpu = OneCpu("monty", "tokio-rt-worker", program.pin_cpu, warm=True)
        if _WARM is not None:  # the warm server: a worker of its pool, already started (pinned once checked out)
            try:
                return self._run(_WARM, program, monty_limits, cpu)
            finally:
                cpu.release()
        early = _take_early()
        if early is not None:  # started by start_early(): its worker booted while the run was prepared
            try:
                return self._run(early, program, monty_limits, cpu)
            finally:
                cpu.release()
                _end_warm_up()
                early.__exit__(None, None, None)
        with _pm.Monty(max_processes=1, binary_path=_worker_binary()) as pool:
            try:
                return self._run(pool, program, monty_limits, cpu)
            finally:
                cpu.release()

    def _run(self, pool: Any, program: Program, monty_limits: dict[str, Any], cpu: OneCpu) -> Any:
        from ..core import prelude, sessions
        from ..core.rewrite import rewrite_for_sandbox

        # The check exists to refuse bad tool calls before any tool runs (and to note wrong calls of the program's
        # own functions): a program that can make neither runs unchecked (the check is a large part of a warm run).
        began = time.monotonic()
        checking = _worth_checking(program.code, program.tools)
        code, helpers, differences = rewrite_for_sandbox(program.code)  # same lines: see codeact.core.rewrite
        stubs = program.stubs + prelude.stubs_for(prelude.names_in(code)) if helpers else program.stubs
        seen = ResultKeys()
        notes: list[tuple[int, str]] = []
        _give_notes(program, differences, None)
        for type_check in (True, False) if checking else (False,):
            try:
                with pool.checkout(limits=monty_limits, type_check=type_check,
                                   type_check_stubs=stubs, type_check_format="concise") as session:
                    cpu.worker_pid = session.worker_pid
                    if program.state:
                        # bound as values, not compiled as literals: a list of 100,000 items is past what
                        # the sandbox compiles in one statement, and every later run would fail to start
                        session.feed_run("None", inputs=dict(program.state), skip_type_check=True)
                    if helpers:  # the prelude's helpers the rewritten code calls (codeact.core.prelude)
                        session.feed_run(helpers, skip_type_check=True)
                    value = self._drive(session, program, code, cpu, seen)
                    if program.on_state is not None:
                        program.on_state(sessions.plain(session.feed_run(sessions.harvest(program.code,
                                                                                          program.state,
                                                                                          program.tools))))
                _give_notes(program, notes, None)
                return value
            except _pm.MontyTypingError as exc:
                from .monty_errors import triage

                blocking, notes = triage(str(exc), program)
                if blocking:
                    raise ProgramError(blocking) from None
                continue  # nothing about a tool: run without the checker (its parser or the sandbox's decides)
            except _pm.MontySyntaxError as exc:
                from .monty_errors import syntax_error

                raise ProgramError(syntax_error(exc, program)) from None
            except _pm.MontyRuntimeError as exc:
                from .monty_errors import runtime_error

                info = runtime_error(exc, program, seen.by_tool)
                _give_notes(program, notes, info.line)
                raise ProgramError(info) from None
            except _pm.MontyCrashedError as exc:
                from .monty_errors import worker_lost

                raise ProgramError(worker_lost(exc, program, time.monotonic() - began)) from None
            except _pm.MontyConfigurationError as exc:  # the session's set-up refused (1.4.0: a MontyRuntimeError)
                raise ProgramError(ErrorInfo("RuntimeError", f"the sandbox refused to start the run: {exc}", None,
                                             None)) from None
        raise AssertionError("unreachable")

    def _drive(self, session: Any, program: Program, code: str, cpu: OneCpu, seen: ResultKeys) -> Any:
        def printer(stream: str, text: str) -> None:
            if stream == "stderr" and program.on_print_err is not None:
                program.on_print_err(text)
            else:
                program.on_print(text)

        spaces = namespaces(program.tools)
        # the sandbox's paths are POSIX ones: on Windows its file calls stay refused
        files = WorkspaceOS(program.workspace) if program.workspace is not None and os.name != "nt" else None
        modules = HostModules(program.workspace, memory=int(program.limits.memory),
                              timeout=float(program.limits.timeout), on_print=program.on_print)
        # the sandbox holds UTF-8 only: a root that is not (a Latin-1 user folder) reaches it quoted, as any name
        cwd = quote(files.root, ending=True) if files is not None else None  # as Path.resolve() gives it
        snap = session.feed_start(code, print_callback=printer, cwd=cwd)
        if not isinstance(snap, _pm.MontyComplete):  # a host call: from here on, host and worker share one CPU (a
            cpu.pin()  # program that makes none pays nothing); the worker has started all its threads by now
        while not isinstance(snap, _pm.MontyComplete):
            if isinstance(snap, _pm.NameLookupSnapshot):
                members = spaces.get(snap.variable_name) if snap.object_id is None else None
                if members is not None:
                    snap = snap.resume(value=_namespace(snap.variable_name, members))
                else:
                    snap = snap.resume()  # an undefined name: NameError in the sandbox
                continue
            name = snap.function_name
            if snap.is_os_function:
                snap = _resume(snap, _answer_os(name, snap.args, snap.kwargs, files, modules))
                continue
            tool = program.tools.get(name)
            if tool is None and modules.handles(name):
                try:
                    answer = {"return_value": modules.call(name, tuple(snap.args), dict(snap.kwargs))}
                except Exception as exc:  # noqa: BLE001 - the program's to catch, as CPython's would be
                    answer = {"exception": _for_sandbox(exc, program)}
                snap = _resume(snap, answer)
                continue
            # what the tool starts (ripgrep, bash) may use every CPU; an MCP call stays on the run's CPU (its server
            # got every CPU when it started: codeact.backends.cpu.all_cpus)
            spawns = tool is not None and not tool.in_process
            if spawns:
                cpu.widen()
            try:
                value = program.call_tool(name, snap.args, snap.kwargs)  # fresh each snapshot; no tool mutates them
                seen.add(name, value)
                answer = {"return_value": value}
            except BaseException as exc:  # noqa: BLE001 - every tool failure is the program's to catch
                answer = {"exception": exc}
            finally:
                if spawns:
                    cpu.narrow()  # before waiting on the worker, whose answer should wake us on its CPU
            snap = _resume(snap, answer)
        return _as_python(snap.output)


def _resume(snap: Any, answer: dict[str, Any]) -> Any:
    """``snap`` resumed with ``answer``; one holding a string the sandbox cannot hold (a file name that is not UTF-8:
    an error the program could not catch) is given again with it quoted (codeact.core.pathnames)."""
    try:
        return snap.resume(answer)
    except _pm.MontyRuntimeError:
        from ..core.pathnames import clean

        cleaned = clean(answer.get("return_value"))
        if cleaned is None:
            raise
        return snap.resume({"return_value": cleaned})


def _worth_checking(code: str, tools: Any) -> bool:
    """Whether the type check can find anything in ``code``: a tool call it cannot vouch for on the host
    (codeact.core.literal_calls: a tool mentioned other than in a direct call with literal arguments its schema
    accepts), a call of a name the program does not define (a misspelt tool), or a function or class of its own
    (its calls may be wrong: shown as notes). ``True`` when it does not parse (the checker reports it)."""
    import ast

    from ..core import literal_calls
    from ..core.sessions import assigned
    from ..pyast import parse

    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return True
    known = set(assigned(tree)) | _BUILTIN_NAMES  # the tree, not the code: one parse
    mentions = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and offers(tools, node.id):
            mentions = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in known \
                and not offers(tools, node.func.id):
            return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return True
    return mentions and not literal_calls.all_valid(tree, tools)


_WARM: Any = None  # the warm server's pool (keep_warm): its workers serve run after run


def keep_warm(processes: int = 4) -> None:
    """Keep a pool of ``processes`` Monty workers for the life of this process (the warm server), one started now.
    A worker a program crashes is replaced by the pool."""
    global _WARM
    if _pm is None or _WARM is not None:
        return
    pool = _pm.Monty(max_processes=processes, binary_path=_worker_binary())
    pool.__enter__()
    with pool.checkout() as session:
        session.feed_run("1")
    _WARM = pool


_EARLY: Any = None  # a pool entered ahead of this process's next run (start_early), used by that run alone


def start_early() -> None:
    """Enter a one-worker pool now for the run about to come in this process (``codeact run`` without a server):
    the pool spawns its worker in the background, which boots while the run imports and checks what it needs
    (part of a cold run's wall time). The next :meth:`MontyBackend.execute` takes it; exit closes it otherwise."""
    global _EARLY, _EARLY_WARMING
    if _pm is None or _WARM is not None or _EARLY is not None:
        return
    import atexit
    import threading

    pool = _pm.Monty(max_processes=1, binary_path=_worker_binary())
    pool.__enter__()
    _EARLY = pool
    # a worker's first program costs more than the next: a throwaway one, in the background (the pool releases
    # the interpreter while it waits), so the run's own checkout finds the worker warm or waits for it
    _EARLY_WARMING = threading.Thread(target=_warm_up, args=(pool,), name="codeact-monty-warm", daemon=True)
    _EARLY_WARMING.start()
    atexit.register(_close_early)


_EARLY_WARMING: Any = None


def _warm_up(pool: Any) -> None:
    try:
        with pool.checkout() as session:
            session.feed_run("1")
    except Exception:  # noqa: BLE001 - only a head start: the run's own checkout reports a broken worker
        pass


def _take_early() -> Any:
    global _EARLY
    pool, _EARLY = _EARLY, None
    return pool


def _end_warm_up() -> None:
    """Wait for the warm-up's session to end before its pool does: a pool closed under it (a run that failed
    before its own checkout) fails that session, and the thread reporting it aborted the whole process
    (SIGABRT) when the interpreter was exiting meanwhile."""
    if _EARLY_WARMING is not None:
        _EARLY_WARMING.join(5)


def _close_early() -> None:
    _end_warm_up()
    pool = _take_early()
    if pool is not None:
        pool.__exit__(None, None, None)


def release_warm() -> None:
    """Stop the warm pool's workers."""
    global _WARM
    pool, _WARM = _WARM, None
    if pool is not None:
        pool.__exit__(None, None, None)


def _worker_binary() -> str | None:
    """The ``monty`` worker next to this Python (where pydantic-monty-runtime installs it in a venv), so the pool
    need not ask ``sysconfig`` at start-up; ``None`` lets pydantic-monty look (and honours ``MONTY_BIN``)."""
    if os.environ.get("MONTY_BIN"):
        return None
    candidate = os.path.join(os.path.dirname(sys.executable), "monty.exe" if os.name == "nt" else "monty")
    return candidate if os.path.isfile(candidate) else None


class ToolNamespace:
    """The host object behind a tool namespace; the sandbox shows it as ``ToolNamespace(tool=<function ...>)``."""


def _namespace(space: str, members: Sequence[str], values: dict[str, Any] | None = None) -> Any:
    """A namespace for the sandbox: a host object whose attributes are external functions NAMED ``space.member``,
    so ``space.member(**kw)`` reaches this loop as a call of ``"space.member"`` and goes through
    ``program.call_tool`` like any tool (one place for accounting, caps and errors)."""
    holder = ToolNamespace()
    for member in members:
        def external(*_args: Any, **_kwargs: Any) -> Any:  # never called: the loop answers the call by name
            raise RuntimeError("answered by the backend loop")
        external.__name__ = external.__qualname__ = f"{space}.{member}"
        setattr(holder, member, external)
    for key, value in (values or {}).items():  # a module's constants and sub-modules
        setattr(holder, key, value)
    return _pm.ClassInstance(holder, eager_attrs=(*members, *(values or {})))


def _host_module(module: str, modules: HostModules) -> Any:
    """The namespace an ``import module`` of a module served on the host gets: its functions as host calls, its
    constants as values, its sub-modules (``urllib.parse``) as namespaces of their own; ``None`` when not served."""
    members = modules.members(module)
    if members is None:
        return None
    constants = modules.constants(module)
    subs = {m: _host_module(f"{module}.{m}", modules) for m in members if modules.members(f"{module}.{m}")}
    return _namespace(module, [m for m in members if m not in constants and m not in subs], {**constants, **subs})


def _answer_os(name: str, args: Any, kwargs: Any, files: WorkspaceOS | None,
               modules: HostModules) -> dict[str, Any]:
    """The answer to an OS call of the sandbox: a file-system call over the workspace, an import of a module served
    on the host, or a refusal that names the tool to use instead."""
    if files is not None and files.handles(name):
        try:
            return {"return_value": files.answer(name, tuple(args), dict(kwargs or {}))}
        except Exception as exc:  # noqa: BLE001 - the program's to catch, as CPython's would be
            return {"exception": exc if type(exc).__module__ == "builtins" else RuntimeError(str(exc))}
    if name == "import" and args:
        module = _host_module(str(args[0]), modules)
        if module is not None:
            return {"return_value": module}
    return _refuse_os(name, args)


def _refuse_os(name: str, args: Any) -> dict[str, Any]:
    if name == "import_stubs":
        return {"return_value": {}}  # no extra modules for the type checker
    if name == "import":
        module = args[0] if args else "?"
        return {"exception": ModuleNotFoundError(f"No module named {module!r} in the sandbox")}
    return {"exception": PermissionError(
        f"{name}: the sandbox has no environment or network access, and writes files only through the write "
        "tools; read with view(path=...), list with glob(pattern=...), write with create()/edit()")}


def _for_sandbox(exc: Exception, program: Program) -> Exception:
    """A host module's exception as the program gets it: a built-in type, the workspace root scrubbed."""
    message = program.workspace.scrub(str(exc)) if program.workspace is not None else str(exc)
    kind = type(exc) if type(exc).__module__ == "builtins" else RuntimeError
    return kind(message)


class DataclassValue:
    """A value of a class the program defined, as the host gets it back (a ``MontyClassProxy``): it prints as
    CPython's dataclass ``repr`` does, ``Point(x=1, y=2)``."""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict[str, Any]) -> None:
        self.name, self.fields = name, fields

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataclassValue) and (self.name, self.fields) == (other.name, other.fields)

    __hash__ = None  # type: ignore[assignment]


MAX_ITEMS = 100_000  # comma-separated items a program's source may hold: the compiler is outside the deadline
MAX_STATEMENTS = 20_000  # statements (lines and ';'-separated ones) likewise: each is a tree the compiler holds


def _refuse_huge(code: str) -> None:
    """Refuse, before anything parses it, a program with more than :data:`MAX_ITEMS` comma-separated items (a
    literal of 10**6 elements) or :data:`MAX_STATEMENTS` statements (``'a\\n' * 125_000``): the sandbox's compiler
    would take minutes and gigabytes outside the run's time and memory limits. Commas, newlines and ``;`` inside
    strings are not counted (the exact count, by tokens, is made only past a cap)."""
    if (code.count(",") <= MAX_ITEMS and code.count("\n") + code.count("\r") + code.count(";") <= MAX_STATEMENTS
            and code.count("{") <= MAX_ITEMS // 2):
        return
    import io
    import re
    import tokenize

    items = statements = 0
    if code.count("{") > MAX_ITEMS // 2:  # f-string fields and dicts: each is a node, inside a string or not
        items = MAX_ITEMS + 1
    # The exact count is trusted only where the host's tokenizer reads the program as the sandbox does: before 3.12
    # it reads an f-string as one string token, while the sandbox parses PEP 701's (the same quotes nested in a
    # field: f"{"("}" opens a bracket to 3.11, a nested triple quote a string that swallows what follows), and a
    # program it cannot read to the end (TokenError, an ERRORTOKEN) may be one it read otherwise. Then the cheap
    # counts stand, which count inside strings too.
    exact = not (sys.version_info < (3, 12) and re.search(r"(?<![\w])(?:[rR]?[fF]|[fF][rR])['\"]", code))
    try:
        for token in tokenize.generate_tokens(io.StringIO(code.replace("\r\n", "\n").replace("\r", "\n")).readline):
            if not exact:
                break
            if token.type == tokenize.OP and token.string == ",":
                items += 1
            elif token.type == tokenize.NEWLINE or (token.type == tokenize.OP and token.string == ";"):
                statements += 1
            elif token.type == tokenize.ERRORTOKEN and not token.string.isspace():
                exact = False
            if items > MAX_ITEMS or statements > MAX_STATEMENTS:  # known: tokenizing the rest costs seconds
                break
    except (tokenize.TokenError, SyntaxError):
        exact = False
    if not exact:
        items = max(items, code.count(","))
        statements = max(statements, code.count("\n") + code.count("\r") + code.count(";"))
    if items > MAX_ITEMS or statements > MAX_STATEMENTS:
        what = (f"{MAX_ITEMS:,} comma-separated items or {MAX_ITEMS // 2:,} braces" if items > MAX_ITEMS
                else f"{MAX_STATEMENTS:,} statements")
        raise ProgramError(ErrorInfo("SyntaxError", f"the program is too large to compile: more than {what} "
                                     "(docs/tool-limits.md); read large data from a file, or build it in a loop",
                                     None, None))


VALUE_DEPTH = 200  # nesting the program's last value may have: printing and JSON recurse through it


def _as_python(value: Any) -> Any:
    """The program's last value with the proxies of its own classes made into :class:`DataclassValue`; one nested
    deeper than :data:`VALUE_DEPTH` is refused as CPython refuses to print one, not with a host traceback. The
    value comes from the sandbox with its sharing (``[[a] * 1000] * 1000`` is two lists): each list, tuple, dict
    and proxy is converted once and shared again, so the work and the copy are the sandbox's own size (what shows
    it is cut by ``within``)."""
    memo: dict[int, tuple[Any, int, Any]] = {}
    return _converted(value, 0, memo, set())


def _too_deep() -> ProgramError:
    return ProgramError(ErrorInfo("RecursionError", f"maximum recursion depth exceeded: the program's last value "
                                  f"is nested more than {VALUE_DEPTH} deep; end with a flatter value or print it "
                                  "in parts", None, None))


def _converted(value: Any, depth: int, memo: dict[int, tuple[Any, int, Any]], busy: set[int]) -> Any:
    """:func:`_as_python` of ``value`` at ``depth``; ``memo``: each container converted, with the levels of
    containers below it (the depth check holds wherever it is met again) and the container itself, kept alive
    so that its id is never another's (a proxy's attributes may be made anew at each read); ``busy``: those being
    converted (one holding itself is as deep as printing goes)."""
    if not isinstance(value, (_pm.MontyClassProxy, list, tuple, dict)):
        return value
    if depth >= VALUE_DEPTH:
        raise _too_deep()
    known = memo.get(id(value))
    if known is not None:
        if depth + known[1] >= VALUE_DEPTH:
            raise _too_deep()
        return known[0]
    if id(value) in busy:
        raise _too_deep()
    busy.add(id(value))
    below = [0]

    def inner(item: Any) -> Any:
        got = _converted(item, depth + 1, memo, busy)
        if isinstance(item, (_pm.MontyClassProxy, list, tuple, dict)):
            below[0] = max(below[0], memo[id(item)][1] + 1)
        return got

    if isinstance(value, _pm.MontyClassProxy):
        made: Any = DataclassValue(value.name, {k: inner(v) for k, v in dict(value.attributes).items()})
    elif isinstance(value, list):
        made = [inner(v) for v in value]
    elif isinstance(value, tuple):
        made = tuple(inner(v) for v in value)
    else:
        made = {k: inner(v) for k, v in value.items()}
    busy.discard(id(value))
    memo[id(value)] = (made, below[0], value)
    return made


class ResultKeys:
    """The keys of the dicts each tool returned, so a KeyError on a result can list the keys it has."""

    def __init__(self) -> None:
        self.by_tool: dict[str, list[str]] = {}

    def add(self, tool: str, value: Any) -> None:
        if type(value) is str:  # most answers: no keys to know
            return
        items = value[:20] if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                known = self.by_tool.setdefault(tool, [])
                known.extend(k for k in item if isinstance(k, str) and k not in known)


def _give_notes(program: Program, notes: list[tuple[int, str]], error_line: int | None) -> None:
    """Hand the type check's notes to the runner, less those about the line the run failed on (the error says it)."""
    for line, note in notes:
        if line != error_line and program.on_note is not None:
            program.on_note(note)


def create() -> MontyBackend:
    return MontyBackend()
