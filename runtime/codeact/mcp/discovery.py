"""``codeact discover``: list every configured MCP server's tools into ``.codeact/tools.lock.json``.

All servers are contacted IN PARALLEL, each within the timeout; a server that will not start, hangs, crashes or
returns bad schemas is recorded as failed with the reason and the others complete. ``--check`` compares the
configuration with the lock without starting anything.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ConfigError
from .config import DEFAULT_TIMEOUT_MS, LoadedConfig, ServerConfig, load_servers, read_exclusions
from .lock import LOCK_FILE, differences, empty_lock, read_lock, server_entry, write_lock
from .plain_listing import ToolFields, from_sdk

T = TypeVar("T")
DEFAULT_TIMEOUT = DEFAULT_TIMEOUT_MS / 1000  # the CLI's wait for a server to start (its "timeout" bounds calls)
PROGRESS_EVERY = 5.0  # seconds between "still waiting" lines
_CLEANUP_TIMEOUT = 6.0  # the SDK gives a server 2 s to exit on EOF, then 2 s after SIGTERM


@dataclass
class Outcome:
    """What discovery learnt about one server."""

    name: str
    status: str  # "ok" | "failed"
    reason: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0  # from the start of discovery until this server answered (its start-up time)
    notes: list[str] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)  # tools left out, with the reason: {name, reason}
    stderr: str | None = None  # a failed local server's last stderr line: shown, never written to the lock
    kept: int | None = None  # failed, but its lock entry for the same configuration was kept (that many tools)


@dataclass
class Report:
    """The result of one discovery: outcomes by server, the lock written, configuration problems."""

    outcomes: dict[str, Outcome]
    lock: dict[str, Any]
    lock_path: Path | None
    config: LoadedConfig
    excluded: tuple[str, ...]
    seconds: float  # until the lock was written (stopping a hung server afterwards can take ~2-4 s more)

    def to_json(self) -> dict[str, Any]:
        return {
            "lock": str(LOCK_FILE),
            "servers": {n: {"status": o.status, "reason": o.reason, "tools": [t["name"] for t in o.tools],
                            "seconds": round(o.seconds, 3), "notes": o.notes, "dropped": o.dropped,
                            "stderr": o.stderr, "kept_from_lock": o.kept} for n, o in self.outcomes.items()},
            "excluded": list(self.excluded),
            "problems": [{"file": p.file, "key": p.key, "message": p.message, "severity": p.severity}
                         for p in self.config.problems],
            "seconds": round(self.seconds, 3),
        }


def active_servers(workspace: Path, environ: Mapping[str, str] | None = None
                   ) -> tuple[LoadedConfig, dict[str, ServerConfig], tuple[str, ...]]:
    """The configuration, the servers to expose (exclusions removed) and the exclusions in force."""
    loaded = load_servers(workspace, environ)
    excluded = read_exclusions(workspace)
    # The lock is committed and shared: it covers the repository's own servers, not one person's user config.
    return loaded, {n: c for n, c in loaded.servers.items() if n not in excluded and c.scope == "workspace"}, excluded


def discover(workspace: Path | str, *, timeout: float = DEFAULT_TIMEOUT, environ: Mapping[str, str] | None = None,
             progress: Callable[[str], None] | None = None, write: bool = True, keep_known: bool = True) -> Report:
    """Contact every configured, non-excluded server in parallel and (with ``write``) write the lock.

    ``progress`` receives one line per event (start, each server's outcome). Never raises for a failing server.
    ``keep_known``: a server that fails now but whose configuration is the one its lock entry was made for keeps
    that entry as it is (its last known tools stay callable once it is back), so the committed lock does not change
    with machine load or a server that is briefly down; the outcome says so (``kept``).
    """
    started = time.perf_counter()
    root = Path(workspace).resolve()
    loaded, servers, excluded = active_servers(root, environ)
    say = progress or (lambda _line: None)
    result: dict[str, Any] = {}
    try:
        recorded: Mapping[str, Any] = (read_lock(root) or empty_lock())["servers"]
    except ConfigError:
        recorded = {}  # unreadable: written anew
    previous = recorded if keep_known else {}
    # a server listed fine before, configured as it was then: its second listing is asked again only if its first
    # one differs from what the lock holds (see _list_server)
    known = {name: entry for name, entry in recorded.items() if name in servers and isinstance(entry, dict)
             and entry.get("status") == "ok" and same_configuration(entry, servers[name])}

    def heard(o: Outcome) -> None:
        known = previous.get(o.name)
        if o.status != "ok" and isinstance(known, dict) and same_configuration(known, servers[o.name]):
            o.kept = len(known.get("tools") or [])
        say(outcome_line(o))

    def publish(outcomes: dict[str, Outcome]) -> None:
        lock = empty_lock()
        for name, config in servers.items():
            o = outcomes[name]
            if o.kept is not None:
                lock["servers"][name] = previous[name]
                continue
            lock["servers"][name] = server_entry(config, status=o.status, reason=o.reason, tools=o.tools,
                                                 dropped=o.dropped)
        result["lock"] = lock
        result["path"] = write_lock(root, lock) if write else None
        result["outcomes"] = outcomes
        result["seconds"] = time.perf_counter() - started

    if servers:
        say(f"discovering {len(servers)} MCP server(s) in parallel (start-up within {timeout:g} s): "
            f"{', '.join(servers)}")
        run_stopping_servers(discover_servers(servers, timeout=timeout, cwd=root, environ=environ,
                                              on_outcome=heard, publish=publish, progress=say, known=known))
    else:
        say("no MCP servers configured" + (f" (excluded: {', '.join(excluded)})" if excluded else ""))
        publish({})
    return Report(result["outcomes"], result["lock"], result["path"], loaded, excluded, result["seconds"])


def run_stopping_servers(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where a SIGTERM, SIGHUP or SIGQUIT to the main thread ends it as Ctrl-C does, through
    its ``finally`` (then ``SystemExit(128 + N)``): their default action ends the process at once, and the servers
    started, each in a session of its own, ran on. The loop's own signal handling is used, not a Python handler
    raising: an exception raised by a handler that fires during garbage collection is lost."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    got: list[int] = []

    async def stopping() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        installed = []

        def ended(signum: int) -> None:
            if not got and task is not None:
                task.cancel()  # once: a second signal must not cut the cleanup short
            got.append(signum)

        for name in ("SIGTERM", "SIGHUP", "SIGQUIT"):
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # Windows: as it was
                    loop.add_signal_handler(signum, ended, signum)
                    installed.append(signum)
        try:
            return await main
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        result = asyncio.run(stopping())
    except asyncio.CancelledError:
        if got:
            raise SystemExit(128 + got[0]) from None
        raise
    if got:
        raise SystemExit(128 + got[0])
    return result


async def discover_servers(servers: Mapping[str, ServerConfig], *, timeout: float = DEFAULT_TIMEOUT,
                           cwd: Path | None = None, environ: Mapping[str, str] | None = None,
                           on_outcome: Callable[[Outcome], None] | None = None,
                           publish: Callable[[dict[str, Outcome]], None] | None = None,
                           progress: Callable[[str], None] | None = None,
                           known: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Outcome]:
    """List the tools of every server concurrently, each within ``timeout`` seconds (the CLI's 60 s by default):
    start-up has its own bound, whatever a server's ``timeout``, which bounds each call (as in the Copilot CLI).

    ``publish`` is called with every outcome as soon as each server has answered or run out of time — before
    the timed-out servers have been shut down — so a hung server delays the result by its timeout only.
    ``progress`` hears which servers are still awaited every :data:`PROGRESS_EVERY` seconds. ``environ`` is the
    environment local servers inherit (the calling run's; default ``os.environ``), plus each one's ``env``.
    ``known``: the lock entries of servers listed before with the same configuration (see :func:`_list_server`).
    """
    from . import prespawn

    loop = asyncio.get_running_loop()
    began = loop.time()  # from the servers' start, as the CLI counts: the SDK's import overlaps their start-up
    base_env = dict(os.environ if environ is None else environ)
    # each local server's stderr, read for the reason when it fails
    errlogs = {name: tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
               for name, config in servers.items() if config.transport == "stdio"}
    workers: list[asyncio.Task[None]] = []
    try:
        await prespawn.start(servers, errlogs, cwd, base_env)
        if any(config.transport != "stdio" for config in servers.values()) or not prespawn.SUPPORTED:
            import_sdk()  # while the local servers start (a local one is listed with no SDK: plain_listing)
        return await _await_servers(servers, timeout, cwd, base_env, errlogs, began, on_outcome, publish, progress,
                                    known, workers)
    except BaseException:
        for worker in workers:  # discovery ends (a signal, Ctrl-C): no server is waited for or listed again
            worker.cancel()
        if workers:
            await asyncio.wait(workers, timeout=_CLEANUP_TIMEOUT)
        raise
    finally:
        await prespawn.stop_all()
        for errlog in errlogs.values():
            errlog.close()


async def _await_servers(servers: Mapping[str, ServerConfig], timeout: float, cwd: Path | None,
                         base_env: Mapping[str, str], errlogs: Mapping[str, Any], began: float,
                         on_outcome: Callable[[Outcome], None] | None,
                         publish: Callable[[dict[str, Outcome]], None] | None,
                         progress: Callable[[str], None] | None,
                         known: Mapping[str, Mapping[str, Any]] | None,
                         workers: list[asyncio.Task[None]]) -> dict[str, Outcome]:
    """:func:`discover_servers` once its servers are started; ``workers`` gets the task listing each."""
    loop = asyncio.get_running_loop()
    # A server counts as answered once it has listed its tools; stopping it (0.3-0.8 s for a Python server) goes
    # on in its task while the others are still awaited, so it neither delays the lock nor inflates a start time.
    listed: dict[str, asyncio.Future[_Listing]] = {name: loop.create_future() for name in servers}
    workers += [asyncio.create_task(_list_server(config, cwd, base_env, listed[name], began + timeout,
                                                 (known or {}).get(name), errlogs.get(name)),
                                    name=f"discover:{name}") for name, config in servers.items()]
    tasks = {future: name for name, future in listed.items()}
    limits = {name: timeout for name in servers}
    outcomes: dict[str, Outcome] = {}
    pending = set(tasks)
    next_tick = began + PROGRESS_EVERY
    while pending:
        now = loop.time()
        overdue = {t for t in pending if now >= began + limits[tasks[t]]}
        for task in overdue:
            task.cancel()  # its worker is stopped below, after the lock is published
            name = tasks[task]
            outcomes[name] = Outcome(name, "failed", f"did not start within {limits[name]:g} s (start-up: 60 s as "
                                                     "in the Copilot CLI, or discover --timeout; a server's "
                                                     "\"timeout\" bounds each call)", seconds=now - began)
            if on_outcome:
                on_outcome(outcomes[name])
        pending -= overdue
        if not pending:
            break
        if progress and now >= next_tick:
            waiting = sorted(tasks[t] for t in pending)
            progress(f"  waiting {now - began:.0f} s for {', '.join(waiting)} (up to "
                     f"{max(limits[n] for n in waiting):g} s)")
            next_tick = now + PROGRESS_EVERY
        wake = min([began + limits[tasks[t]] for t in pending] + ([next_tick] if progress else []))
        done, pending = await asyncio.wait(pending, timeout=max(wake - now, 0.001),
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            name = tasks[task]
            outcome = _outcome_of(task, servers[name])
            listed_at = getattr(task.result(), "listed_at", None) if outcome.status == "ok" else None
            outcome.seconds = (listed_at or loop.time()) - began  # the first listing: the server's start-up
            outcomes[name] = outcome
            if on_outcome:
                on_outcome(outcome)
    outcomes = dict(sorted(outcomes.items()))
    if publish:
        publish(outcomes)
    for name, future in listed.items():
        if not future.done():
            future.cancel()
    for worker, future in zip(workers, listed.values()):
        if future.cancelled() and not worker.done():
            worker.cancel()  # out of time: stop waiting for its answer
    # let the SDK stop every server (the abandoned ones included), bounded
    done_workers, _stuck = await asyncio.wait(workers, timeout=_CLEANUP_TIMEOUT)
    for worker in done_workers:
        if not worker.cancelled():
            worker.exception()  # already reported through its future
    return outcomes


def import_sdk() -> None:
    import mcp.client.session  # noqa: F401
    import mcp.client.sse  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401


class _Listing(list[ToolFields]):
    """The tools a server listed, and those dropped as invalid: ``(name, reason)``.

    ``cli_only``: the tools it offers only to a client that declares sampling and elicitation, as the Copilot CLI
    does (``None``: that second listing failed or did not finish, so they are not known)."""

    dropped: list[tuple[str, str]]
    cli_only: list[str] | None
    cli_listing_error: str | None
    listed_at: float | None  # loop time when the listing was complete


# The Copilot CLI 1.0.102 declares {"sampling": {}, "elicitation": {"form": {}, "url": {}}} (no roots) when it
# connects, and some servers (server-everything) register tools only for such a client. CodeAct's client declares
# neither: it cannot hand a server's sampling request to the model, nor an elicitation to the user, in a program.
CLI_ONLY_REASON = ("offered only to clients that declare sampling and elicitation (the Copilot CLI does); a "
                   "CodeAct program cannot answer the server's sampling or elicitation requests, so it cannot "
                   "call this tool")
CLI_LISTING_GRACE = 10.0  # seconds the listing as the CLI sees it may take at least (twice the first one's, if more)


async def _refuse(_context: Any, _params: Any) -> Any:
    """A sampling/elicitation callback that declares the capability and refuses every request (listing only)."""
    from mcp.types import INVALID_REQUEST, ErrorData

    return ErrorData(code=INVALID_REQUEST, message="codeact discover only lists tools")


async def _list_tools(config: ServerConfig, cwd: Path | None, environ: Mapping[str, str], *,
                      errlog: Any = None, as_cli: bool = False,
                      on_listed: Callable[[_Listing], None] | None = None) -> _Listing:
    """Every page of ``config``'s tools, in one session (``as_cli``: declaring sampling and elicitation): a local
    server by discovery's own client, unless it does not answer plainly (:mod:`codeact.mcp.plain_listing`), then
    with the SDK, as every remote server.

    ``on_listed`` hears the listing before the session is closed (stopping a server takes a while)."""
    from . import plain_listing, prespawn

    listing = _Listing()
    listing.dropped = []
    listing.cli_only = None
    listing.cli_listing_error = None
    listing.listed_at = None
    process = await prespawn.take(config, errlog, cwd, environ) if config.transport == "stdio" and errlog else None
    if process is not None:
        try:
            listing.extend(await plain_listing.list_tools(process, as_cli=as_cli))
        except plain_listing.NotPlain:
            listing.clear()
        else:
            listing.listed_at = asyncio.get_running_loop().time()
            if on_listed:
                on_listed(listing)
            return listing
        finally:
            await plain_listing.stop(process)
    return await _list_tools_with_sdk(config, cwd, environ, listing, errlog=errlog, as_cli=as_cli,
                                      on_listed=on_listed)


async def _list_tools_with_sdk(config: ServerConfig, cwd: Path | None, environ: Mapping[str, str],
                               listing: _Listing, *, errlog: Any, as_cli: bool,
                               on_listed: Callable[[_Listing], None] | None) -> _Listing:
    from . import prespawn
    from .sessions import open_session

    prespawn.install()
    options = {"sampling_callback": _refuse, "elicitation_callback": _refuse} if as_cli else None
    async with open_session(config, errlog=errlog, cwd=cwd, environ=environ, session_options=options) as session:
        cursor = None
        for _page in range(100):
            tools, dropped, cursor = await _list_page(session, cursor)
            listing.extend(tools)
            listing.dropped.extend(dropped)
            if not cursor:
                break
        listing.listed_at = asyncio.get_running_loop().time()
        if on_listed:
            on_listed(listing)
    return listing


async def _list_server(config: ServerConfig, cwd: Path | None, environ: Mapping[str, str],
                       listed: asyncio.Future[_Listing], deadline: float,
                       known: Mapping[str, Any] | None = None, errlog: Any = None) -> None:
    """List ``config``'s tools into ``listed`` (its result, or the failure) by ``deadline`` (loop time).

    The server is listed twice, one session after the other (a server may hold a file while it runs): as CodeAct's
    client connects (what a program can call), then declaring sampling and elicitation as the Copilot CLI does;
    what only the second listing has is ``cli_only``. ``listed`` is set as soon as the second one has listed,
    before its server is stopped; ``listed_at`` is when the first one had (the server's start-up time).
    With ``known``, its lock entry made for this same configuration, a first listing that gives exactly what the
    entry holds (the same tools, schemas and invalid tools) takes ``cli_only`` from the entry: the server is
    started once, not twice."""
    from .sessions import describe_failure, stderr_tail

    loop = asyncio.get_running_loop()
    began = loop.time()
    try:
        listing = await _list_tools(config, cwd, environ, errlog=errlog)
    except Exception as exc:
        tail = stderr_tail(errlog)
        if tail:  # as exc.add_note() does, which Python 3.10 (the runtime's floor) lacks
            vars(exc).setdefault("__notes__", []).append(f"stderr: {tail}")
        if not listed.done():
            listed.set_exception(exc)
        return

    if known is not None and _unchanged(listing, known, config):
        listing.cli_only = sorted(d["name"] for d in known.get("dropped") or [] if d.get("reason") == CLI_ONLY_REASON)
        if not listed.done():
            listed.set_result(listing)
        return

    def compare(as_cli: _Listing) -> None:
        plain = {t.name for t in listing} | {n for n, _r in listing.dropped}
        listing.cli_only = sorted({t.name for t in as_cli} - plain)
        if not listed.done():
            listed.set_result(listing)

    grace = min(max(CLI_LISTING_GRACE, 2 * ((listing.listed_at or loop.time()) - began)), deadline - loop.time() - 0.5)
    try:
        await asyncio.wait_for(_list_tools(config, cwd, environ, errlog=errlog, as_cli=True, on_listed=compare),
                               max(grace, 0.001))
    except Exception as exc:  # noqa: BLE001 - said in the outcome's notes; the first listing stands
        if not listed.done():
            listing.cli_listing_error = (f"it did not list within {max(grace, 0):.0f} s"
                                         if isinstance(exc, TimeoutError) else describe_failure(exc))
    if not listed.done():
        listed.set_result(listing)


def _unchanged(listing: _Listing, entry: Mapping[str, Any], config: ServerConfig) -> bool:
    """Whether a server's first listing is what its lock ``entry`` holds: the tools it exposes, as written to the
    lock, and the tools dropped for a reason other than being offered only to the CLI."""
    tools: list[dict[str, Any]] = []
    dropped = [{"name": n, "reason": r} for n, r in listing.dropped if config.exposes(n)]
    for tool in listing:
        if config.exposes(tool.name):
            made, problem = tool_entry(tool)
            if problem:
                dropped.append({"name": tool.name, "reason": problem})
            else:
                tools.append(made)
    recorded = [d for d in entry.get("dropped") or [] if d.get("reason") != CLI_ONLY_REASON]

    def by_name(items: list[Any]) -> list[Any]:
        return sorted(items, key=lambda item: str(item.get("name")))

    return by_name(tools) == by_name(list(entry.get("tools") or [])) and by_name(dropped) == by_name(recorded)


async def _list_page(session: Any, cursor: str | None
                     ) -> tuple[list[ToolFields], list[tuple[str, str]], str | None]:
    """One ``tools/list`` page. When the SDK refuses the page because some tool is invalid (it validates the
    whole listing), the page is fetched again raw and each tool validated alone, so one bad tool drops only
    itself, as in the Copilot CLI."""
    from mcp.types import PaginatedRequestParams, Tool
    from pydantic import ValidationError

    params = PaginatedRequestParams(cursor=cursor) if cursor else None
    try:
        listing = await session.list_tools(params=params)
        return [from_sdk(tool) for tool in listing.tools], [], listing.next_cursor
    except ValidationError:
        dispatcher = getattr(session, "_dispatcher", None)  # mcp 2.3: the raw JSON-RPC layer
        if dispatcher is None:
            raise
        raw = await dispatcher.send_raw_request("tools/list", {"cursor": cursor} if cursor else None, {})
    kept, dropped = [], []
    for index, item in enumerate((raw or {}).get("tools") or []):
        name = item.get("name") if isinstance(item, dict) else None
        try:
            kept.append(from_sdk(Tool.model_validate(item, by_name=False)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            dropped.append((str(name) if name else f"#{index}", f"invalid tool: {where}: {first.get('msg', '')}"))
    next_cursor = (raw or {}).get("nextCursor")
    return kept, dropped, next_cursor if isinstance(next_cursor, str) else None


def _outcome_of(task: asyncio.Future[_Listing], config: ServerConfig) -> Outcome:
    from .sessions import describe_failure, is_connection_closed

    name = config.name
    exc = task.exception()
    if exc is not None:
        notes = getattr(exc, "__notes__", [])
        reason = describe_failure(exc)
        if is_connection_closed(exc):
            reason = "the server exited or closed the connection during the handshake"
        # the server's stderr is machine noise (paths, times): shown, never written to the lock
        stderr = notes[-1].removeprefix("stderr: ") if notes else None
        return Outcome(name, "failed", reason, stderr=stderr)
    tools = task.result()
    entries = []
    dropped = [(n, r) for n, r in getattr(tools, "dropped", []) if config.exposes(n)]
    dropped += [(n, CLI_ONLY_REASON) for n in getattr(tools, "cli_only", None) or [] if config.exposes(n)]
    offered = set(n for n, _r in getattr(tools, "dropped", [])) | set(getattr(tools, "cli_only", None) or [])
    for tool in tools:
        offered.add(tool.name)
        if not config.exposes(tool.name):
            continue
        entry, problem = tool_entry(tool)
        if problem:
            dropped.append((tool.name, problem))
        else:
            entries.append(entry)
    notes = []
    unknown = sorted(t for t in config.tools if t != "*" and t not in offered)
    if unknown:
        notes.append(f"the tools filter names tools the server does not offer: {', '.join(unknown)}")
    for tool_name, why in sorted(dropped):
        notes.append(f"tool {tool_name!r} dropped: {why}")
    if error := getattr(tools, "cli_listing_error", None):
        notes.append(f"listing it as the Copilot CLI connects (declaring sampling and elicitation) failed: {error}; "
                     "tools it offers only to such clients are not known")
    return Outcome(name, "ok", None, entries, notes=notes,
                   dropped=[{"name": n, "reason": r} for n, r in sorted(dropped)])


def tool_entry(tool: ToolFields) -> tuple[dict[str, Any], str | None]:
    """A tool's lock entry, or a problem with its schemas (an MCP input schema must be an object schema)."""
    def plain(value: Any) -> Any:
        return json.loads(json.dumps(value)) if value is not None else None

    try:
        entry: dict[str, Any] = {"name": tool.name, "description": (tool.description or "").strip(),
                                 "input_schema": plain(tool.input_schema), "output_schema": plain(tool.output_schema)}
    except (TypeError, ValueError) as exc:
        return {}, f"schema is not JSON ({exc})"
    if tool.title:
        entry["title"] = tool.title
    if tool.annotations is not None:
        entry["annotations"] = tool.annotations
    if tool.task_support == "required":
        return {}, "requires task-augmented execution (MCP tasks), which CodeAct does not support"
    for key in ("input_schema", "output_schema"):
        schema = entry[key]
        if schema is None and key == "output_schema":
            continue
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return {}, f"{key} must be a JSON Schema with \"type\": \"object\""
        if not isinstance(schema.get("properties", {}), dict):
            return {}, f"{key}.properties must be an object"
    return entry, None


def same_configuration(entry: Mapping[str, Any], config: ServerConfig) -> bool:
    """Whether lock ``entry`` was made for ``config`` as configured now (transport, config hash, tools filter)."""
    return (entry.get("transport"), entry.get("config_hash"), list(entry.get("tools_filter") or ["*"])) == \
        (config.transport, config.config_hash(), list(config.tools))


def outcome_line(o: Outcome) -> str:
    if o.status == "ok":
        text = f"  ok      {o.name}: {len(o.tools)} tool(s), started in {o.seconds:.2f} s"
        return text + "".join(f"\n          note: {n}" for n in o.notes)
    kept = (f"\n          kept its lock entry ({o.kept} tool(s)) made for this same configuration: callable again "
            "once the server is back") if o.kept is not None else ""
    return f"  FAILED  {o.name}: {o.reason} (after {o.seconds:.2f} s)" + (f"\n          stderr: {o.stderr}"
                                                                        if o.stderr else "") + kept


def check_lock(workspace: Path | str, environ: Mapping[str, str] | None = None) -> list[str]:
    """Offline drift check: how the configured servers differ from the lock (``[]`` if they match).

    Starts no server. Raises :class:`~codeact.errors.ConfigError` if the lock or the settings cannot be read.
    """
    root = Path(workspace).resolve()
    _loaded, servers, _excluded = active_servers(root, environ)
    return differences(read_lock(root), servers)


def check_lock_live(workspace: Path | str, *, timeout: float = DEFAULT_TIMEOUT,
                    environ: Mapping[str, str] | None = None) -> list[str]:
    """Live drift check: :func:`check_lock`, then re-discover every server (STARTS them, writes nothing) and
    compare their tools with the lock. Servers that embed machine-specific text in their schemas (the time zone,
    a path) differ between machines, which is why the offline check is the default."""
    root = Path(workspace).resolve()
    found = check_lock(root, environ)
    locked = (read_lock(root) or empty_lock())["servers"]
    fresh = discover(root, timeout=timeout, environ=environ, write=False, keep_known=False).lock["servers"]
    for name in sorted(set(locked) & set(fresh)):
        old, new = locked[name], fresh[name]
        if old.get("status") != new["status"]:
            found.append(f"server {name!r}: {old.get('status')} in the lock, {new['status']} now"
                         + (f" ({new['reason']})" if new["reason"] else ""))
            continue
        before = {t["name"]: t for t in old.get("tools", [])}
        after = {t["name"]: t for t in new["tools"]}
        for tool in sorted(set(after) - set(before)):
            found.append(f"server {name!r}: new tool {tool!r}")
        for tool in sorted(set(before) - set(after)):
            found.append(f"server {name!r}: tool {tool!r} is gone")
        for tool in sorted(set(before) & set(after)):
            was, now = before[tool], after[tool]
            changed = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
            if changed:
                found.append(f"server {name!r}: tool {tool!r} changed ({', '.join(changed)})")
    return found


__all__ = ["DEFAULT_TIMEOUT", "Outcome", "Report", "active_servers", "check_lock", "check_lock_live", "discover",
           "discover_servers", "same_configuration", "tool_entry"]
