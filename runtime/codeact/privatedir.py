"""A folder only this user may enter: made 0700 when missing, refused when it is a link, not a folder, or another
user's. One rule for every private per-user folder (the server's socket folder, the output store, the write locks,
the sessions, the provider hub's state).

A leaf module: the launcher's thin client imports it under ``python -S``, at every start. Its error (:class:`codeact.errors.PrivateFolderError`, an ``OSError``) is imported only to be raised.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import os
from stat import S_IMODE, S_ISDIR

TYPE_CHECKING = False  # not `typing` at run time
if TYPE_CHECKING:
    from typing import NoReturn

_OTHERS = 0o077  # group and world bits


def ensure_private_dir(path: "str | os.PathLike[str]", *, what: str = "folder", create: bool = True,
                       parents: bool = False, tighten: bool = True) -> None:
    """Make sure ``path`` is a private folder of this user; raise :class:`~codeact.errors.PrivateFolderError`
    (an ``OSError``) saying why it is not.

    ``create``: make it (mode 0700) when missing; ``parents``: make missing folders above it too (with the
    default mode, as ``mkdir -p``: they are not private). A link, a non-folder and another user's folder are
    refused. A folder of this user with another mode is made 0700 when ``tighten``; without it one that others
    may enter is refused (the server's socket folder: whoever could enter it may have left a socket there).
    ``what`` names the folder in the message. Where there are no user IDs (Windows) only links and non-folders
    are refused."""
    if create:
        try:
            if parents:
                parent = os.path.dirname(os.path.abspath(path))
                os.makedirs(parent, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            _refuse(f"cannot create the {what} {os.fspath(path)}: {exc.strerror}")
    try:
        info = os.lstat(path)
    except OSError as exc:
        _refuse(f"no {what} {os.fspath(path)}: {exc.strerror}")
    refused = f"the {what} {os.fspath(path)} is not a private folder of this user"
    if not S_ISDIR(info.st_mode):  # lstat: a link to a folder is a link
        _refuse(f"{refused}: it is not a folder (a link?)")
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows
        return
    if info.st_uid != os.geteuid():
        _refuse(f"{refused}: it belongs to another user (uid {info.st_uid})")
    mode = S_IMODE(info.st_mode)
    if mode & _OTHERS and not tighten:
        _refuse(f"{refused}: others may enter it (mode {mode:o}); remove it")
    if mode != 0o700 and tighten:
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            _refuse(f"{refused}: its mode is {mode:o} and it cannot be made 0700: {exc.strerror}")


def _refuse(message: str) -> "NoReturn":
    from .errors import PrivateFolderError

    raise PrivateFolderError(message)


__all__ = ["ensure_private_dir"]
