"""The MCP servers the GitHub Copilot CLI would start here, read from the files it reads.

Files, highest precedence first (a server name defined in several files takes the WHOLE entry from the first;
fields are never merged across files):

1. ``<workspace>/.mcp.json`` — or, ONLY when that file does not exist, ``<workspace>/.github/mcp.json``
2. ``$COPILOT_HOME/mcp-config.json`` (``COPILOT_HOME`` defaults to ``~/.copilot``)

This is what the Copilot CLI 1.0.102 does (``copilot mcp list --json``): a ``.mcp.json`` that exists hides
``.github/mcp.json`` entirely, even when it is empty (``{}``) or malformed (the CLI then warns and starts no
workspace server at all). Only valid entries take part: an invalid entry is reported and skipped, and a valid
definition of the same name in the user file is then used (with a warning saying so).

Schema: ``{"mcpServers": {NAME: {"type": "local"|"stdio"|"http"|"sse", "command", "args", "env", "cwd", "url",
"headers", "tools": ["*"] | [names], "timeout"}}}``; workspace files may also use the bare form ``{NAME: {...}}``.
``timeout`` is in milliseconds and bounds each tool call, not the server's start-up (seen on CLI 1.0.102: a call
past it fails with "MCP error -32001: Request timed out", while a server answering ``initialize`` after 6 s with
``"timeout": 2000`` is loaded); start-up has its own bound, :data:`START_TIMEOUT`.

Expansion, as the CLI does it (seen on 1.0.102 by starting real servers): ``$VAR``, ``${VAR}`` and
``${VAR:-default}`` are replaced in ``command``, ``args``, ``env``, ``headers``, ``url`` and ``cwd``; an undefined
variable without a default is left as written (with a warning). ``~`` is expanded in ``cwd`` only (``~`` and
``~/...``): the CLI starts ``"command": "~/bin/x"`` literally (it fails) and passes ``"~/x"`` in ``args`` unchanged.
A relative ``cwd`` is relative to the workspace, a user server's too (``$COPILOT_HOME/mcp-config.json``). The CLI
checks ``url`` as written, before expansion: one that is not a valid URL then (``"${URL}"``,
``"http://127.0.0.1:${PORT}/mcp"``) skips the server with "Invalid url"; ``"https://${HOST}/mcp"`` is valid.
An undefined variable is also said, as a note (codeact.core.notices), in each run that starts the server.

Nothing here imports the ``mcp`` SDK.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError
from ..paths import copilot_home, home

Transport = Literal["stdio", "http", "sse"]
TRANSPORTS: dict[str, Transport] = {"local": "stdio", "stdio": "stdio", "http": "http", "sse": "sse"}
WORKSPACE_FILES = (".mcp.json", ".github/mcp.json")
USER_FILE = "mcp-config.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
DEFAULT_TIMEOUT_MS = 60_000  # the start-up wait (`codeact discover --timeout` changes it), whatever "timeout" says
START_TIMEOUT = DEFAULT_TIMEOUT_MS / 1000  # seconds: a server's start-up and handshake
_KNOWN_KEYS = {"type", "command", "args", "env", "cwd", "url", "headers", "tools", "timeout"}


@dataclass(frozen=True)
class ConfigProblem:
    """Something wrong in a configuration file, located by file and key (``mcpServers.NAME.field``)."""

    file: str
    key: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.key else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server, with ``${VAR}`` already expanded (expanded secrets never appear in ``repr``)."""

    name: str
    transport: Transport
    source: str  # the file it came from, as shown to people: ".mcp.json", "$COPILOT_HOME/mcp-config.json"
    scope: Literal["workspace", "user"]
    command: str | None = None
    args: tuple[str, ...] = field(default=(), repr=False)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    tools: tuple[str, ...] = ("*",)
    timeout: float | None = None  # seconds, as configured (``"timeout"`` is milliseconds); None: not set. It
    # bounds each call (call_timeout), never start-up (START_TIMEOUT)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)  # the entry as written
    # what a run that starts the server says as a note: the variables left as written (undefined)
    warnings: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def config_hash(self) -> str:
        """A fingerprint of how to reach the server, stable across machines and free of secrets.

        Built from the entry AS WRITTEN (``${VAR}`` unexpanded): transport, command, args, cwd, url, and the
        NAMES of env variables and headers — never their values. ``tools`` and ``timeout`` are left out: the
        lock records the tools filter by itself, and a timeout does not change what a server offers.
        Computed once per object: every MCP call checks it.
        """
        cached = self.__dict__.get("_config_hash")
        if cached is not None:
            return str(cached)
        raw = self.raw
        material = {
            "transport": self.transport,
            "command": raw.get("command"),
            "args": list(raw.get("args") or []),
            "cwd": raw.get("cwd"),
            "url": raw.get("url"),
            "env": sorted((raw.get("env") or {}).keys()),
            "headers": sorted(k.lower() for k in (raw.get("headers") or {}).keys()),
        }
        digest = hashlib.sha256(json.dumps(material, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        object.__setattr__(self, "_config_hash", f"sha256:{digest[:16]}")  # frozen: not a field, never compared
        return f"sha256:{digest[:16]}"

    @property
    def call_timeout(self) -> float | None:
        """Seconds one tool call may take: its ``timeout``, else no bound of its own (the run's deadline bounds
        it)."""
        return self.timeout

    def exposes(self, tool: str) -> bool:
        """Whether the ``tools`` filter lets ``tool`` through."""
        return "*" in self.tools or tool in self.tools


@dataclass
class LoadedConfig:
    """The servers that win, by name (sorted), and every problem found on the way."""

    servers: dict[str, ServerConfig]
    problems: list[ConfigProblem]
    files: list[str]  # the files that exist and were read, highest precedence first

    @property
    def errors(self) -> list[ConfigProblem]:
        return [p for p in self.problems if p.severity == "error"]


def config_files(workspace: Path, environ: Mapping[str, str] | None = None) -> list[tuple[Path, str, str]]:
    """``(path, shown name, scope)`` of every file the CLI reads, highest precedence first (existing or not).

    ``.github/mcp.json`` is among them only while ``.mcp.json`` does not exist: the CLI ignores it otherwise."""
    dot, github = WORKSPACE_FILES
    files = [(workspace / dot, dot, "workspace")]
    if not os.path.lexists(workspace / dot):
        files.append((workspace / github, github, "workspace"))
    files.append((copilot_home(environ) / USER_FILE, f"$COPILOT_HOME/{USER_FILE}", "user"))
    return files


def load_servers(workspace: Path | str, environ: Mapping[str, str] | None = None) -> LoadedConfig:
    """Read every configuration file; never raises for bad content (problems are returned instead)."""
    env = os.environ if environ is None else environ
    root = Path(workspace)
    servers: dict[str, ServerConfig] = {}
    problems: list[ConfigProblem] = []
    read: list[str] = []
    dot, github = WORKSPACE_FILES
    if os.path.lexists(root / dot) and (root / github).is_file():
        problems.append(ConfigProblem(github, "", f"ignored, as the Copilot CLI ignores it whenever {dot} exists "
                                                  f"(even an empty one); move its servers into {dot}", "warning"))
    for path, shown, scope in config_files(root, env):
        if not path.is_file():
            continue
        read.append(shown)
        entries, prefix = _entries(path, shown, scope, problems)
        for name, entry in entries.items():
            key = f"{prefix}{name}"
            server = _parse_entry(name, entry, shown, scope, key, root, env, problems)
            if server is None:
                continue
            if name in servers:
                problems.append(ConfigProblem(shown, key, f"also defined in {servers[name].source}, which takes "
                                                          "precedence; this definition is ignored", "warning"))
                continue
            servers[name] = server
    return LoadedConfig(dict(sorted(servers.items())), problems, read)


def _entries(path: Path, shown: str, scope: str, problems: list[ConfigProblem]) -> tuple[dict[str, Any], str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        problems.append(ConfigProblem(shown, "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"))
        return {}, ""
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(ConfigProblem(shown, "", f"cannot read: {exc}"))
        return {}, ""
    if not isinstance(data, dict):
        problems.append(ConfigProblem(shown, "", "expected a JSON object with an \"mcpServers\" object"))
        return {}, ""
    if "mcpServers" in data:
        servers = data["mcpServers"]
        if not isinstance(servers, dict):
            problems.append(ConfigProblem(shown, "mcpServers", "must be an object mapping server names to entries"))
            return {}, ""
        return servers, "mcpServers."
    if "servers" in data and isinstance(data["servers"], dict):
        problems.append(ConfigProblem(shown, "servers", "this is the VS Code format, which the Copilot CLI does not "
                                                        "read; rename the key to \"mcpServers\""))
        return {}, ""
    if scope == "workspace" and data and all(isinstance(v, dict) for v in data.values()):
        return data, ""  # the bare form: {NAME: {...}}
    if data:
        problems.append(ConfigProblem(shown, "", "no \"mcpServers\" object found"))
    return {}, ""


@dataclass
class _EntryReader:
    """Reads one ``mcpServers`` entry's fields, each problem located at ``key.FIELD`` of file ``shown``."""

    shown: str
    key: str
    entry: dict[str, Any]
    env: Mapping[str, str]
    problems: list[ConfigProblem]
    unset: list[str] = field(default_factory=list)  # the undefined-variable warnings, for the run's notes

    def bad(self, field_name: str, message: str) -> None:
        self.problems.append(ConfigProblem(self.shown, f"{self.key}.{field_name}" if field_name else self.key,
                                           message))

    def strings(self, field_name: str) -> list[str]:
        value = self.entry.get(field_name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.bad(field_name, "must be a list of strings")
            return []
        return value

    def mapping(self, field_name: str) -> dict[str, str]:
        value = self.entry.get(field_name, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self.bad(field_name, "must be an object of string values")
            return {}
        return value

    def expand(self, text: str, field_name: str) -> str:
        def missing(var: str) -> None:
            message = f"${var} is not set; left as written (the CLI does the same)"
            self.problems.append(ConfigProblem(self.shown, f"{self.key}.{field_name}", message, "warning"))
            self.unset.append(f"{self.shown}: {self.key}.{field_name}: {message}")
        return expand_vars(text, self.env, missing)


def _entry_kind(entry: dict[str, Any], read: _EntryReader) -> str | None:
    """The entry's ``type`` as written, or inferred from ``command``/``url``; ``None`` (said) when neither works."""
    kind = entry.get("type")
    if kind is None:
        kind = "stdio" if "command" in entry else ("http" if "url" in entry else None)
        if kind is None:
            read.bad("", "needs \"command\" (a local server) or \"url\" (a remote one)")
            return None
    if kind not in TRANSPORTS:
        read.bad("type", f"unknown type {kind!r}; use one of {', '.join(TRANSPORTS)}")
        return None
    return str(kind)


def _check_location(entry: dict[str, Any], kind: str, read: _EntryReader) -> None:
    """``command`` for a local server, an http(s) ``url`` for a remote one, never the other's field."""
    command, url = entry.get("command"), entry.get("url")
    if TRANSPORTS[kind] == "stdio":
        if not isinstance(command, str) or not command.strip():
            read.bad("command", "a local server needs a non-empty \"command\" string")
        if url is not None:
            read.bad("url", f"\"url\" is for http/sse servers; this one is {kind}")
        return
    if isinstance(url, str) and "$" in url and not _valid_url(url):
        read.bad("url", "Invalid url (the Copilot CLI skips this server: it checks the url as written, before "
                        "${VAR} is expanded; put the variable in a part of the url where it is valid, or write it "
                        "out)")
    elif not isinstance(url, str) or not re.match(r"^https?://", url):
        read.bad("url", f"a {kind} server needs an http(s) \"url\"")
    if command is not None:
        read.bad("command", f"\"command\" is for local servers; this one is {kind}")


def _resolved_cwd(cwd: str, read: _EntryReader, root: Path) -> str:
    """``cwd`` expanded, ``~`` as the user's home, a relative one against the repository (a user server's too)."""
    expanded = read.expand(cwd, "cwd")
    if expanded == "~" or expanded.startswith("~/"):
        expanded = str(home(read.env)) + expanded[1:]
    return expanded if os.path.isabs(expanded) else str(root / expanded)


def _parse_entry(name: str, entry: Any, shown: str, scope: str, key: str, root: Path, env: Mapping[str, str],
                 problems: list[ConfigProblem]) -> ServerConfig | None:
    if not name.strip():
        problems.append(ConfigProblem(shown, key, "a server needs a non-empty name"))
        return None
    if not isinstance(entry, dict):
        problems.append(ConfigProblem(shown, key, "must be an object"))
        return None
    read = _EntryReader(shown, key, entry, env, problems)
    before = len(problems)
    kind = _entry_kind(entry, read)
    if kind is None:
        return None
    transport = TRANSPORTS[kind]
    command, cwd, url = entry.get("command"), entry.get("cwd"), entry.get("url")
    args, raw_env, raw_headers = read.strings("args"), read.mapping("env"), read.mapping("headers")
    tools = read.strings("tools") if "tools" in entry else ["*"]
    _check_location(entry, kind, read)
    if cwd is not None and not isinstance(cwd, str):
        read.bad("cwd", "must be a string")
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        read.bad("timeout", "must be a positive number of milliseconds")
    if any(p.severity == "error" for p in problems[before:]):
        return None
    for unknown in sorted(set(entry) - _KNOWN_KEYS):
        problems.append(ConfigProblem(shown, f"{key}.{unknown}", "unknown field, ignored", "warning"))

    server = ServerConfig(
        name=name,
        transport=transport,
        source=shown,
        scope=scope,  # type: ignore[arg-type]
        command=read.expand(command, "command") if transport == "stdio" and command is not None else None,
        args=tuple(read.expand(a, f"args[{i}]") for i, a in enumerate(args)),
        env={k: read.expand(v, f"env.{k}") for k, v in raw_env.items()},
        cwd=_resolved_cwd(cwd, read, root) if isinstance(cwd, str) else None,
        url=read.expand(url, "url") if isinstance(url, str) else None,
        headers={k: read.expand(v, f"headers.{k}") for k, v in raw_headers.items()},
        tools=tuple(tools),
        timeout=float(timeout) / 1000 if timeout is not None else None,
        raw=entry,
    )
    object.__setattr__(server, "warnings", tuple(read.unset))  # every field is expanded by now
    return server


def _valid_url(url: str) -> bool:
    """Whether ``url`` parses as a URL as written (what the CLI checks before expanding ``${VAR}``): a scheme, and
    for http(s) a host and a numeric port."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme or ""):
        return False
    return parts.scheme.lower() not in ("http", "https") or bool(parts.hostname)


def expand_vars(text: str, env: Mapping[str, str], missing: Callable[[str], None] | None = None) -> str:
    """``$VAR``, ``${VAR}`` and ``${VAR:-default}`` replaced from ``env`` as the Copilot CLI does; an undefined
    variable without a default stays as written (``missing`` is told its name)."""
    def sub(match: re.Match[str]) -> str:
        var = match[1] or match[3]
        if var in env and (env[var] or match[2] is None):
            return env[var]
        if match[2] is not None:
            return match[2]
        if missing is not None:
            missing(var)
        return match[0]
    return _VAR.sub(sub, text)


def read_exclusions(workspace: Path | str) -> tuple[str, ...]:
    """Server names the user excluded: ``mcp_exclude`` in ``<workspace>/.codeact/settings.json`` (empty if none)."""
    path = Path(workspace) / ".codeact" / "settings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, ValueError) as exc:
        raise ConfigError(f".codeact/settings.json: cannot read mcp_exclude ({exc})") from None
    value = data.get("mcp_exclude", []) if isinstance(data, dict) else None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(".codeact/settings.json: mcp_exclude must be a list of server names")
    return tuple(value)


__all__ = ["DEFAULT_TIMEOUT_MS", "START_TIMEOUT", "ConfigProblem", "LoadedConfig", "ServerConfig", "config_files", "copilot_home",
           "expand_vars", "load_servers", "read_exclusions"]
