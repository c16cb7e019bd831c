"""The few system calls of the launcher's thin client, without ``os``: a leaf on the C module the interpreter has
loaded already (``posix``). Importing ``os`` costs ~1 ms at every start under ``python -S`` (it loads
collections.abc, posixpath, genericpath and stat), a tenth of a warm run's floor. Each helper does what the ``os``
function it names does; elsewhere than POSIX (Windows) ``os`` itself stands in.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import sys

try:
    import posix as sysos
except ImportError:  # pragma: no cover - Windows: the thin client runs everything in process there
    import os as sysos  # type: ignore[no-redef]

try:
    from _stat import S_IMODE, S_ISDIR, S_ISSOCK
except ImportError:  # pragma: no cover - an interpreter without the C module
    from stat import S_IMODE, S_ISDIR, S_ISSOCK

IS_POSIX = sysos.__name__ == "posix"
_ENCODING, _ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def environ() -> "dict[str, str]":
    """A copy of this process's environment, decoded as ``os.environ`` decodes it."""
    if not IS_POSIX:  # pragma: no cover - Windows
        import os

        return dict(os.environ)
    return {key.decode(_ENCODING, _ERRORS): value.decode(_ENCODING, _ERRORS) for key, value in sysos.environ.items()}


def fsencode(path: str) -> bytes:
    """``os.fsencode``."""
    return path.encode(_ENCODING, _ERRORS)


def join(folder: str, name: str) -> str:
    """``os.path.join(folder, name)`` (POSIX)."""
    if name.startswith("/"):
        return name
    return folder + name if not folder or folder.endswith("/") else folder + "/" + name


def dirname(path: str) -> str:
    """``os.path.dirname`` (POSIX)."""
    head = path[:path.rfind("/") + 1]
    return head.rstrip("/") if head and head != "/" * len(head) else head


def lexists(path: str) -> bool:
    """``os.path.lexists``."""
    try:
        sysos.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def is_dir(path: str) -> bool:
    """``os.path.isdir``."""
    try:
        return S_ISDIR(sysos.stat(path).st_mode)
    except (OSError, ValueError):
        return False


_O_PATH = getattr(sysos, "O_PATH", 0)


def real_path(path: str) -> "tuple[str, bool]":
    """``os.path.realpath(path)``, and whether the kernel saw it exist: for a path that exists, asked of the kernel
    (Linux: opened ``O_PATH``, its ``/proc/self/fd`` link read: three system calls, where ``os.path.realpath`` makes
    an ``lstat`` a component in Python), else ``os.path.realpath`` itself (``False``: a file to create, a dangling
    link, a loop, or no ``O_PATH`` here)."""
    if _O_PATH:
        try:
            fd = sysos.open(path, _O_PATH | sysos.O_CLOEXEC)
        except (OSError, ValueError):
            fd = -1
        if fd >= 0:
            try:
                found = sysos.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                found = ""
            finally:
                sysos.close(fd)
            if found.startswith("/") and not found.endswith(" (deleted)"):
                return found, True
    import os

    return os.path.realpath(path), False


def realpath(path: str) -> str:
    """``os.path.realpath(path)``, asked of the kernel where it can say (:func:`real_path`)."""
    return real_path(path)[0]


__all__ = ["IS_POSIX", "S_IMODE", "S_ISDIR", "S_ISSOCK", "dirname", "environ", "fsencode", "is_dir", "join",
           "lexists", "real_path", "realpath", "sysos"]
