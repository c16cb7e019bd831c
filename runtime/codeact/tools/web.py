"""Network tools: web_fetch (public web pages as text) and github_api (the GitHub REST API with the user's token).

web_fetch resolves every host itself, refuses addresses a page must not reach (loopback, private, link-local,
cloud metadata...), and connects to the very address it checked, on every redirect hop; only hosts the user lists in
``config.json`` ``allow_hosts`` skip the check. Heavy imports happen inside the functions, so a run that does not
offer these tools pays nothing for them.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
from typing import Any

from ..core import notices
from ..core.limits import Deadline
from ..core.tool import ToolContext
from ..errors import PolicyError, ToolError

MAX_REDIRECTS = 5
MAX_BODY = 10 * 1024 * 1024  # bytes read from one response
USER_AGENT = "codeact-web-fetch/0.1 (+https://github.com/features/copilot/cli)"
# Names and addresses of cloud metadata services (many are also link-local or private, caught anyway).
METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
                            "instance-data.ec2.internal", "metadata.azure.com", "metadata.tencentyun.com"})
METADATA_ADDRESSES = frozenset({"169.254.169.254", "169.254.170.2", "169.254.169.253", "fd00:ec2::254",
                                "100.100.100.200", "168.63.129.16", "192.0.0.192"})
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml",
               "application/yaml", "application/toml", "application/x-sh", "application/rss+xml",
               "application/atom+xml", "application/ld+json", "application/xhtml+xml")


# ------------------------------------------------------------------------------------------------ address policy
def address_refusal(ip: str) -> str | None:
    """Why web_fetch may not connect to ``ip`` (e.g. ``"loopback"``), or ``None`` if it is a public address."""
    import ipaddress

    try:
        addr: Any = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return "unparseable"
    if str(addr) in METADATA_ADDRESSES:
        return "cloud metadata"
    if addr.version == 6:
        embedded = addr.ipv4_mapped or addr.sixtofour or (addr.teredo[1] if addr.teredo else None)
        if embedded is None and addr in ipaddress.ip_network("64:ff9b::/96"):
            embedded = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        if embedded is not None:
            inner = address_refusal(str(embedded))
            if inner:
                return f"{inner} (embedded in IPv6)"
    for test, reason in (("is_loopback", "loopback"), ("is_link_local", "link-local"),
                         ("is_multicast", "multicast"), ("is_unspecified", "unspecified"),
                         ("is_reserved", "reserved"), ("is_private", "private")):
        if getattr(addr, test):
            return reason
    if not addr.is_global:
        return "non-public"
    return None


def _norm_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def resolve_checked(host: str, port: int, allow_hosts: tuple[str, ...] | list[str] = ()) -> list[tuple[Any, ...]]:
    """``getaddrinfo`` results for ``host``, refused (PolicyError) if any address is not public and the host is not
    in ``allow_hosts``. Connecting to exactly these addresses defeats DNS rebinding between check and use."""
    import socket

    name = _norm_host(host)
    allowed = name in {_norm_host(h) for h in allow_hosts}
    how = ("the user can add the host to \"allow_hosts\" in codeact's config.json if it should be reachable")
    if not allowed and name in METADATA_HOSTS:
        raise PolicyError(f"refused to reach {name}: it is a cloud metadata service; {how}")
    try:
        infos = _addresses(name, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve host {name!r}: {exc}") from None
    if not allowed:
        for info in infos:
            ip = str(info[4][0])
            reason = address_refusal(ip)
            if reason:
                raise PolicyError(f"refused to reach {name} ({ip}): a {reason} address, not the public web; {how}")
    return infos


def _addresses(host: str, port: int) -> list[tuple[Any, ...]]:
    """``socket.getaddrinfo`` (TCP) of ``host``, waiting at most the run's time left: the resolver's own wait
    (glibc: seconds per name server and attempt, for a name whose server never answers) holds no socket the
    watchdog can shut. :class:`TimeoutError` at the deadline; the lookup is left to end in its daemon thread."""
    import socket
    import threading

    deadline = Deadline.current()
    if deadline is None:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    answer: list[Any] = []

    def resolve() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            answer.append(exc)

    lookup = threading.Thread(target=resolve, name="codeact-resolve", daemon=True)
    lookup.start()
    lookup.join(deadline.remaining())
    if not answer:
        raise TimeoutError(f"resolving {host} did not end before the run's deadline")
    if isinstance(answer[0], BaseException):
        raise answer[0]
    return list(answer[0])


def _create_connection(address: tuple[str, int], timeout: Any = None, source_address: Any = None,
                       **_: Any) -> Any:
    """``socket.create_connection`` with its name looked up by :func:`_addresses` (bounded by the deadline)."""
    return _connect_first(_addresses(address[0], address[1]), address[0], timeout, source_address)


def _connect(host: str, port: int, timeout: Any, allow_hosts: tuple[str, ...]) -> Any:
    return _connect_first(resolve_checked(host, port, allow_hosts), host, timeout)


def _connect_first(infos: list[tuple[Any, ...]], host: str, timeout: Any, source_address: Any = None) -> Any:
    """A socket connected to the first of ``infos`` (``getaddrinfo``'s) that answers, as create_connection does."""
    import socket

    last: OSError | None = None
    for family, kind, proto, _name, sockaddr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not None and timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            last = exc
            sock.close()
    raise last or OSError(f"cannot connect to {host}")


class _Watchdog:
    """Shuts every socket of one fetch down when the run's deadline passes, so that no read (a page trickling in,
    headers sent a byte at a time, a TLS handshake) outlives the run; ``fired`` says it happened."""

    def __init__(self, deadline: Deadline) -> None:
        import threading

        self.fired = False
        self._sockets: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline.remaining(), self._fire)
        self._timer.daemon = True

    def register(self, sock: Any) -> Any:
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                self._shut(sock)
        return sock

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: Any) -> None:
        import socket

        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: an SSL socket's would drop its state
        except (OSError, ValueError):
            pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _guarded_opener(allow_hosts: tuple[str, ...], watch: _Watchdog | None = None) -> Any:
    """A urllib opener for http/https only, no proxies, whose every connection goes through the address check
    (and, with ``watch``, is shut down at the run's deadline)."""
    import http.client
    import ssl
    import urllib.request

    def guard(sock: Any) -> Any:
        return watch.register(sock) if watch is not None else sock

    class Conn(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = guard(_connect(self.host, self.port, self.timeout, allow_hosts))

    class SecureConn(http.client.HTTPSConnection):
        def connect(self) -> None:
            sock = guard(_connect(self.host, self.port, self.timeout, allow_hosts))
            self.sock = guard(self._context.wrap_socket(sock, server_hostname=self.host))  # type: ignore[attr-defined]

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(Conn, req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(SecureConn, req, context=ssl.create_default_context())

    opener = urllib.request.OpenerDirector()
    for handler in (Plain(), Secure(), _redirects(drop_auth_across_hosts=False)(),
                    urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.UnknownHandler()):
        opener.add_handler(handler)
    return opener


def _watched_opener(watch: _Watchdog) -> Any:
    """``github_api``'s opener: urllib's own (the user's proxy settings kept, no address check: GitHub Enterprise may
    be on a private address), the token dropped on a redirect to another host, and every socket it makes, a
    proxy's too, shut down at the run's deadline."""
    import http.client
    import urllib.request

    def watched(*args: Any, **kwargs: Any) -> Any:
        return watch.register(_create_connection(*args, **kwargs))

    class Conn(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = watched  # the connection's own hook: a proxy tunnel goes through it too

    class SecureConn(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = watched

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(Conn, req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(SecureConn, req, context=self._context)  # type: ignore[attr-defined]

    return urllib.request.build_opener(Plain(), Secure(), _redirects(drop_auth_across_hosts=True))


def _redirects(*, drop_auth_across_hosts: bool) -> Any:
    import urllib.parse
    import urllib.request

    class Redirects(urllib.request.HTTPRedirectHandler):
        max_redirections = MAX_REDIRECTS

        def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> Any:
            location = headers.get("location") or headers.get("uri") or ""
            scheme = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, location)).scheme.lower()
            if location and scheme not in ("http", "https"):
                raise PolicyError(f"refused a redirect to a {scheme}: URL; only http and https are followed")
            return super().http_error_302(req, fp, code, msg, headers)

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None and drop_auth_across_hosts:
                old_host = urllib.parse.urlsplit(req.full_url).netloc.lower()
                if urllib.parse.urlsplit(newurl).netloc.lower() != old_host:
                    for key in list(new.headers):
                        if key.lower() == "authorization":
                            del new.headers[key]
            return new

    return Redirects


# ------------------------------------------------------------------------------------------------------ web_fetch
def web_fetch(ctx: ToolContext, *, url: str, max_length: int = 20000) -> str:
    """Fetch an http(s) URL and return its text; HTML is reduced to readable text with links kept as [text](url).

    At most ``max_length`` characters are returned; a longer text ends with a visible truncation note.
    Loopback, private, link-local and cloud-metadata addresses are refused (on every redirect too) unless the
    user lists the host in config.json ``allow_hosts``. Non-text content (images, PDFs, archives) is refused.
    The fetch ends by the run's deadline: a page still arriving then fails with a TimeoutError saying so.
    """
    import urllib.parse
    import urllib.request

    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise PolicyError(f"web_fetch reaches http:// and https:// URLs only, got {url!r}")
    if parts.username or parts.password:
        raise PolicyError("web_fetch refuses URLs with credentials in them (user:password@host)")
    request = urllib.request.Request(url.strip(), headers={
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5"})
    deadline = ctx.run_deadline()
    deadline.check("web_fetch", f"fetching {url}")
    timeout = max(0.05, min(20.0, deadline.remaining()))
    with _Watchdog(deadline) as watch:
        try:
            final_url, ctype, charset, raw = _fetch(_guarded_opener(tuple(ctx.allow_hosts), watch), request,
                                                    timeout, deadline)
        except Exception as exc:
            if watch.fired or deadline.expired():
                raise deadline.stopped("web_fetch", f"fetching {url}") from None
            raise _fetch_error(exc, url, timeout) from None
        if watch.fired:  # the read ended because the socket was shut
            raise deadline.stopped("web_fetch", f"fetching {url}")
    cut_bytes = len(raw) > MAX_BODY
    raw = raw[:MAX_BODY]
    is_html = ctype in ("text/html", "application/xhtml+xml") or (ctype == "application/octet-stream"
                                                                     and raw.lstrip()[:15].lower().startswith(b"<!doctype html"))
    if not is_html and not ctype.startswith("text/") and ctype not in _TEXT_TYPES and not ctype.endswith(("+json", "+xml")):
        raise ToolError(f"{url} is {ctype} ({len(raw)} bytes), not text; web_fetch returns text only")
    if is_html and not charset:
        charset = _sniff_charset(raw)
    try:
        text = raw.decode(charset or "utf-8", "replace")
    except LookupError:
        text = raw.decode("utf-8", "replace")
    raw = b""  # the page is held once, as text
    stopped = None
    if is_html:
        from .html_text import read_html  # html.parser is slow to load: only for a page that is HTML

        keep, html_chars = html_keep(int(ctx.limits.memory), max_length), len(text)
        text, stopped = read_html(text, base_url=final_url, max_chars=keep,
                                  check=lambda: deadline.check("web_fetch", f"reading the page of {url}"))
        if stopped is not None:
            said = (f"only the first {stopped:,} of the page's {html_chars:,} characters of HTML were read: their "
                    f"text reached {keep:,} characters, what web_fetch reads of a page under the run's memory limit")
            text += f"\n... [{said}]"
            notices.note("web_fetch()", f"{url}: {said} (CODEACT_MEMORY); fetch a narrower page")
    if cut_bytes and stopped is None:
        text += f"\n... [the page is larger than {MAX_BODY // (1024 * 1024)} MiB; only its start was read]"
        notices.note("web_fetch()", f"{url}: only the first {MAX_BODY // (1024 * 1024)} MiB of the page were read; "
                                    "fetch a narrower page (an API, a raw file)")
    if len(text) > max_length:
        read_all = "" if stopped is None else " read"
        notices.note("web_fetch()", f"{url}: returned the first {max_length:,} of {len(text):,} characters{read_all} "
                                    f"(max_length={max_length}); raise max_length= or fetch a narrower page")
        text = (f"{text[:max_length]}\n... [truncated {len(text) - max_length} more characters; "
                "raise max_length or fetch a narrower page]")
    return text


HTML_SHARE = 64  # the text web_fetch reads of an HTML page: at most this share of the run's memory limit


def html_keep(memory: int, max_length: int) -> int:
    """The characters of text web_fetch reads of an HTML page (before blank lines are dropped): four times what
    it returns and at least 1 Mi, but at most 1/:data:`HTML_SHARE` of the run's memory limit ``memory`` (at least
    64 Ki): reading holds a few times that (one of each character, 4 bytes where the page has an emoji), and
    a link's URL, joined to the page's, can make the text far longer than the page."""
    return min(max(4 * max_length, 1 << 20), max(1 << 16, memory // HTML_SHARE))


def _fetch(opener: Any, request: Any, timeout: float, deadline: Deadline) -> tuple[str, str, str | None, bytes]:
    """The final URL, content type, charset and at most MAX_BODY + 1 bytes of the body, read in pieces."""
    with opener.open(request, timeout=timeout) as response:
        final_url = response.geturl()
        ctype = response.headers.get_content_type()
        charset = response.headers.get_content_charset()
        parts, size = [], 0
        while size <= MAX_BODY:
            deadline.check("web_fetch", f"fetching {final_url}")
            part = response.read(min(1 << 16, MAX_BODY + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
        return final_url, ctype, charset, b"".join(parts)


def _fetch_error(exc: BaseException, url: str, timeout: float) -> BaseException:
    """The error a failed fetch reports (a policy refusal stays one)."""
    import socket
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        return ToolError(f"HTTP {exc.code} {exc.reason} from {url}")
    if isinstance(exc, urllib.error.URLError):
        if isinstance(exc.reason, (PolicyError, ToolError)):
            return exc.reason
        return ToolError(f"cannot fetch {url}: {exc.reason}")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return ToolError(f"cannot fetch {url}: timed out after {timeout:g} s")
    if isinstance(exc, (PolicyError, ToolError)):
        return exc
    if isinstance(exc, (OSError, ValueError)):
        return ToolError(f"cannot fetch {url}: {exc}")
    return ToolError(f"cannot fetch {url}: {type(exc).__name__}: {exc}")


def _sniff_charset(raw: bytes) -> str | None:
    import re

    found = re.search(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)""", raw[:4096], re.I)
    return found[1].decode("ascii", "replace") if found else None


# ----------------------------------------------------------------------------------------------------- github_api
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# github_api is annotated ``-> Any``, not ``-> dict | list``: against a union, the pre-run type check refuses
# ``github_api(endpoint="/repos/o/r")["full_name"]`` (a list cannot take a str key), which is the natural program.


def github_api(ctx: ToolContext, *, endpoint: str, method: str = "GET",
               body: dict | list | None = None) -> Any:
    """Call the GitHub REST API: ``github_api(endpoint="/repos/OWNER/REPO/issues?state=open&per_page=50")``.

    Returns the decoded JSON: a dict, or a list for list endpoints (``{}`` for an empty reply). ``body`` is sent as JSON with POST/PUT/PATCH/DELETE.
    The token comes from COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN, else ``gh auth token``. One page per call:
    page with ``per_page`` and ``page``. GITHUB_API_URL points it at GitHub Enterprise.
    """
    import http.client
    import urllib.error
    import urllib.parse
    import urllib.request

    env = ctx.environ or dict(os.environ)
    verb = str(method).upper()
    if verb not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(_METHODS)}, got {method!r}")
    base = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    url = _api_url(base, endpoint)
    token = _github_token(env, urllib.parse.urlsplit(base).hostname or "")
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
               "User-Agent": USER_AGENT, "Authorization": f"Bearer {token}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=verb, headers=headers)
    shown = f"{verb} {url[len(base):] or '/'}"
    deadline = ctx.run_deadline()
    deadline.check("github_api", shown)
    timeout = max(0.05, min(30.0, deadline.remaining()))  # each wait; the run's deadline bounds the whole call
    with _Watchdog(deadline) as watch:  # a reply trickling in is cut at the deadline, whatever each read waits
        opener = _watched_opener(watch)
        try:
            with opener.open(request, timeout=timeout) as response:
                parts, size = [], 0
                while size <= MAX_BODY:
                    deadline.check("github_api", shown)
                    part = response.read(min(1 << 16, MAX_BODY + 1 - size))
                    if not part:
                        break
                    parts.append(part)
                    size += len(part)
                raw = b"".join(parts)
        except urllib.error.HTTPError as exc:
            if watch.fired or deadline.expired():
                raise deadline.stopped("github_api", shown) from None
            raise ToolError(_github_error(shown, exc)) from None
        except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as exc:
            if watch.fired or deadline.expired():
                raise deadline.stopped("github_api", shown) from None
            if isinstance(exc, urllib.error.URLError):
                raise ToolError(f"GitHub API {shown}: cannot connect to {base} ({exc.reason})") from None
            raise ToolError(f"GitHub API {shown}: {exc or 'timed out'}") from None
        if watch.fired:  # the read ended because the socket was shut
            raise deadline.stopped("github_api", shown)
    if len(raw) > MAX_BODY:
        raise ToolError(f"GitHub API {shown}: the reply is larger than {MAX_BODY >> 20} MiB; ask for less "
                        "(per_page, fewer fields)")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"text": raw.decode("utf-8", "replace")}
    return value if isinstance(value, (dict, list)) else {"value": value}


def _api_url(base: str, endpoint: str) -> str:
    import urllib.parse

    if not isinstance(endpoint, str) or not endpoint.strip():
        raise ValueError("endpoint must be an API path, e.g. '/repos/OWNER/REPO' or '/user'")
    endpoint = endpoint.strip()
    if any(ch.isspace() or ord(ch) < 32 for ch in endpoint):
        raise ValueError("endpoint must not contain spaces or control characters; URL-encode them")
    if "://" in endpoint:
        if not endpoint.startswith(base + "/"):
            raise PolicyError(f"github_api sends your token only to {base}; use web_fetch for other URLs")
        url = endpoint
    else:
        url = base + "/" + endpoint.lstrip("/")
    want, got = urllib.parse.urlsplit(base), urllib.parse.urlsplit(url)
    if (got.scheme, got.netloc) != (want.scheme, want.netloc):
        raise PolicyError(f"github_api sends your token only to {base}")
    return url


def _github_token(env: dict[str, str] | Any, host: str) -> str:
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        if env.get(name, "").strip():
            return env[name].strip()
    import shutil
    import subprocess

    gh = shutil.which("gh", path=env.get("PATH"))
    if gh:
        cmd = [gh, "auth", "token"]
        if host and host != "api.github.com":
            cmd += ["--hostname", host]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=10, env=dict(env),
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    raise ToolError("github_api needs a GitHub token and found none: set GH_TOKEN (or GITHUB_TOKEN, "
                    "COPILOT_GITHUB_TOKEN) in the environment, or log in with `gh auth login`")


def _github_error(shown: str, exc: Any) -> str:
    try:
        detail = json.loads(exc.read() or b"{}")
        message = detail.get("message", "") if isinstance(detail, dict) else ""
    except (ValueError, OSError):
        message = ""
    text = f"GitHub API {shown}: HTTP {exc.code} {exc.reason}" + (f": {message}" if message else "")
    if exc.code == 401:
        text += " (the token is missing, expired or invalid)"
    elif exc.code in (403, 429) and exc.headers.get("X-RateLimit-Remaining") == "0":
        text += f" (rate limit reached; it resets at epoch {exc.headers.get('X-RateLimit-Reset')})"
    elif exc.code == 404:
        text += " (not found, or the token cannot see it)"
    return text
