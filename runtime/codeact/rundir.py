"""Where this user's warm servers listen: a leaf (built-in modules only, no pathlib nor os), shared by the launcher's thin
client (codeact.client) and the workspace boundary (codeact.core.boundary, which never lets a program write there)."""
from .fastos import fsencode, is_dir, join, sysos

TYPE_CHECKING = False  # not `typing` nor `os`: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping

_SOCKET_NAME = 29  # "/" + 24 hex digits + ".sock"
_MAX_SOCKET_PATH = 104  # what every Unix takes in sockaddr_un (Linux 108, macOS 104)


def server_folder(environ: "Mapping[str, str]") -> str:
    """The private folder of this user's servers: ``$XDG_RUNTIME_DIR/codeact``, else ``$TMPDIR/codeact-UID``, else
    (no such folder, or one so deep that a socket path in it would be too long) ``/tmp/codeact-UID``."""
    runtime = environ.get("XDG_RUNTIME_DIR") or ""
    tmp = environ.get("TMPDIR") or ""
    for base, name in ((runtime, "codeact"), (tmp, f"codeact-{sysos.getuid()}")):
        folder = join(base, name)
        if base.startswith("/") and is_dir(base) and len(fsencode(folder)) + _SOCKET_NAME <= _MAX_SOCKET_PATH:
            return folder
    return f"/tmp/codeact-{sysos.getuid()}"


__all__ = ["server_folder"]
