"""The warm server's wire protocol: each frame one of the typed dicts below, checked by whichever end reads it.

A frame is a 4-byte big-endian length and a ``marshal``-ed dict (both ends are this venv's Python; ``marshal`` reads
only plain data: ``dict``, ``list``, ``str``, ``int``, ``float``, ``bytes``, ``bool``, ``None``). The client sends
one request (:data:`REQUESTS`); the server answers a run with ``accepted`` (or ``retry`` / ``refused``), then ``out``
and ``err`` frames, then ``exit``; ``ping``, ``status`` and ``stop`` get one answer each (:data:`REPLIES`). What
each frame holds is written once, as data, and :func:`check_request` / :func:`check_reply` hold a frame to it: a
frame that is not one of these is a :class:`BadFrame` that says which key is wrong, never a ``.get`` default.

Standard library only, and no ``typing`` at run time: the thin client imports this at every run.
"""
import marshal

TYPE_CHECKING = False  # not `typing` (the thin client's start): the types are for mypy only
if TYPE_CHECKING:  # @final: mypy narrows a union of them by the keys a frame has
    import _socket as socket
    from typing import Any, Literal, TypedDict, final

    @final
    class PingRequest(TypedDict):
        op: Literal["ping"]
        protocol: int

    @final
    class StatusRequest(TypedDict):
        op: Literal["status"]

    @final
    class StopRequest(TypedDict):
        op: Literal["stop"]

    @final
    class RunRequest(TypedDict):
        op: Literal["run"]
        protocol: int
        argv: list[str]
        cwd: str
        env: dict[str, str]
        stdin: str | None
        workspace: str

    @final
    class Accepted(TypedDict):
        accepted: bool
        wall_s: float

    @final
    class Retry(TypedDict):
        retry: str

    @final
    class Refusal(TypedDict):
        refused: str

    @final
    class Out(TypedDict):
        out: str

    @final
    class Err(TypedDict):
        err: str

    @final
    class Exit(TypedDict):
        exit: int

    @final
    class Pong(TypedDict):
        pong: bool
        pid: int

    @final
    class Stopping(TypedDict):
        stopping: bool
        pid: int

    @final
    class Status(TypedDict):
        running: bool
        pid: int
        socket: str
        workspace: str
        config_hash: str
        started_at: str
        idle_timeout_s: float
        mcp_sessions: list[dict[str, Any]]
        providers: dict[str, Any] | None
        active_runs: int
        responding: bool
        stuck: list[str]

    Request = PingRequest | StatusRequest | StopRequest | RunRequest
    Reply = Accepted | Retry | Refusal | Out | Err | Exit | Pong | Stopping | Status
    Frame = Request | Reply

PROTOCOL = 1  # a run request of another version is answered `retry` (the client then starts a fresh server)
MAX_FRAME = 1 << 30

_NUMBER = (int, float)
_NONE = type(None)
# kind -> {key: the types its value may have}; "str list" and "str dict" are checked item by item
REQUESTS: "dict[str, dict[str, Any]]" = {
    "ping": {"op": str, "protocol": int},
    "status": {"op": str},
    "stop": {"op": str},
    "run": {"op": str, "protocol": int, "argv": "str list", "cwd": str, "env": "str dict", "stdin": (str, _NONE),
            "workspace": str},
}
# kind (the key that names it) -> {key: types}
REPLIES: "dict[str, dict[str, Any]]" = {
    "accepted": {"accepted": bool, "wall_s": _NUMBER},
    "retry": {"retry": str},
    "refused": {"refused": str},
    "out": {"out": str},
    "err": {"err": str},
    "exit": {"exit": int},
    "pong": {"pong": bool, "pid": int},
    "stopping": {"stopping": bool, "pid": int},
    "running": {"running": bool, "pid": int, "socket": str, "workspace": str, "config_hash": str, "started_at": str,
                "idle_timeout_s": _NUMBER, "mcp_sessions": list, "providers": (dict, _NONE), "active_runs": int,
                "responding": bool, "stuck": "str list"},
}


class BadFrame(ValueError):
    """A frame that is not one the protocol defines (says which key is wrong, and how)."""


def check_request(value: object) -> "Request":
    """``value`` as the request it is; :class:`BadFrame` when it is none of :data:`REQUESTS`."""
    if not isinstance(value, dict):
        raise BadFrame(f"a request must be a dict, not {type(value).__name__}")
    op = value.get("op")
    spec = REQUESTS.get(op) if isinstance(op, str) else None
    if spec is None:
        raise BadFrame(f"unknown request {op!r} (one of: {', '.join(REQUESTS)})")
    _check(value, spec, f"the {op!r} request")
    return value  # type: ignore[return-value]  # checked against its TypedDict's spec just above


def check_reply(value: object, kinds: "tuple[str, ...]") -> "Reply":
    """``value`` as the reply it is, one of ``kinds`` (keys of :data:`REPLIES`); :class:`BadFrame` otherwise."""
    if not isinstance(value, dict):
        raise BadFrame(f"an answer must be a dict, not {type(value).__name__}")
    frame: dict[Any, Any] = value
    kind = next((k for k in kinds if k in frame), None)
    if kind is None:
        raise BadFrame(f"an answer with none of the keys {', '.join(kinds)} (it has: {', '.join(map(str, frame))})")
    _check(frame, REPLIES[kind], f"the {kind!r} answer")
    return value  # type: ignore[return-value]  # checked against its TypedDict's spec just above


def _check(value: "dict[Any, Any]", spec: "dict[str, Any]", what: str) -> None:
    for key, kind in spec.items():
        if key not in value:
            raise BadFrame(f"{what} lacks {key!r}")
        item = value[key]
        if kind == "str list":
            ok = isinstance(item, list) and all(isinstance(x, str) for x in item)
        elif kind == "str dict":
            ok = isinstance(item, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in item.items())
        else:
            ok = isinstance(item, kind) and not (isinstance(item, bool) and kind in (int, _NUMBER))
        if not ok:
            wanted = kind if isinstance(kind, str) else " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
            raise BadFrame(f"{what}: {key!r} must be {wanted}, not {type(item).__name__}")


def send(sock: "socket.socket", value: "Frame") -> None:
    data = marshal.dumps(value)  # type: ignore[arg-type]  # typeshed's marshal knows no TypedDict
    sock.sendall(len(data).to_bytes(4, "big") + data)


def receive(sock: "socket.socket") -> "dict[str, Any] | None":
    """The next frame, unchecked (:func:`check_request`, :func:`check_reply`), or ``None`` when the peer closed the
    connection (at a frame boundary or not); raises ``TimeoutError`` when the socket's timeout passes first, and
    :class:`BadFrame` for one that is too large or not a marshal-ed dict."""
    head = _exactly(sock, 4)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > MAX_FRAME:
        raise BadFrame(f"a frame of {size:,} bytes (at most {MAX_FRAME:,})")
    body = _exactly(sock, size)
    if body is None:
        return None
    try:
        value = marshal.loads(body)
    except (ValueError, EOFError, TypeError) as exc:
        raise BadFrame(f"a frame that is not marshal-ed data ({exc})") from None
    if not isinstance(value, dict):
        raise BadFrame(f"a frame must be a dict, not {type(value).__name__}")
    return value


def _exactly(sock: "socket.socket", size: int) -> "bytes | None":
    chunks, got = [], 0
    while got < size:
        try:
            chunk = sock.recv(min(size - got, 1 << 20))
        except TimeoutError:
            raise
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


__all__ = ["MAX_FRAME", "PROTOCOL", "REPLIES", "REQUESTS", "BadFrame", "check_reply", "check_request", "receive",
           "send"]
