"""Where this user's warm servers listen: a leaf shared by the launcher's thin
client (codeact.client) and the workspace boundary (codeact.core.boundary, which never lets a program write there)."""
import os

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


__all__ = ["server_folder"]
