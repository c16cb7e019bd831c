"""Where this user's warm servers listen: a leaf shared by the launcher's thin client (codeact.client), the
workspace boundary (codeact.core.boundary, which never lets a program write there) and the live providers'
helper (codeact.providers.helper, which finds a workspace's server by its socket's name)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import os
from os.path import dirname, join, lexists, realpath

TYPE_CHECKING = False  # not `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

_SOCKET_NAME = 29  # "/" + 24 hex digits + ".sock"
_MAX_SOCKET_PATH = 104  # what every Unix takes in sockaddr_un (Linux 108, macOS 104)


def server_folder(environ: "Mapping[str, str]") -> str:
    """The private folder of this user's servers: ``$XDG_RUNTIME_DIR/codeact``, else ``$TMPDIR/codeact-UID``, else
    (no such folder, or one so deep that a socket path in it would be too long) ``/tmp/codeact-UID``."""
    runtime = environ.get("XDG_RUNTIME_DIR") or ""
    tmp = environ.get("TMPDIR") or ""
    for base, name in ((runtime, "codeact"), (tmp, f"codeact-{os.getuid()}")):
        folder = os.path.join(base, name)
        if base.startswith("/") and os.path.isdir(base) and len(os.fsencode(folder)) + _SOCKET_NAME <= _MAX_SOCKET_PATH:
            return folder
    return f"/tmp/codeact-{os.getuid()}"


def workspace_of(named: "str | None", cwd: str) -> str:
    """The workspace a run names (``--workspace``, relative to ``cwd``), else the nearest folder above ``cwd``
    holding ``.git``, else ``cwd`` — the same walk as ``codeact.core.boundary.find_workspace`` without its git
    fallback."""
    if named is not None:
        return realpath(join(cwd, named))
    here = probe = realpath(cwd)
    while True:
        if lexists(join(probe, ".git")):
            return probe
        parent = dirname(probe)
        if parent == probe:
            return here
        probe = parent


def install_root() -> str:
    """The runtime folder this module belongs to (``.codeact/runtime``), resolved."""
    return dirname(dirname(realpath(__file__)))


def socket_path(folder: str, workspace: str, install: str | None = None) -> str:
    """The socket of the server for ``workspace`` run by this install (one server per install and workspace)."""
    try:
        from _sha256 import sha256  # built in: hashlib loads OpenSSL first
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import sha256

    key = sha256(f"{install or install_root()}\0{workspace}".encode("utf-8", "surrogateescape")).hexdigest()
    return join(folder, key[:24] + ".sock")


__all__ = ["install_root", "server_folder", "socket_path", "workspace_of"]
