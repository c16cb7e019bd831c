"""Create or re-sync the runtime's venv: the launchers' slow path, standard library only.

The launchers (``bin/codeact`` and ``bin/codeact.ps1``) keep only the fast path: find a venv whose stamp equals
``requirements.txt`` and exec its Python. When none is ready they run, with any Python 3 they find::

    PYTHONPATH=.codeact/runtime python3 -S -m codeact.bootstrap .codeact [SHARED]

which prints the ready venv's Python on stdout (its only output there; progress goes to stderr) and exits 0, or says
what to do and exits 3. The venv is ``ROOT/.venv``, or with ``SHARED`` (``CODEACT_VENV``, a plugin's cache)
``SHARED/<key>``, one per requirements file, ``<key>`` being the first 16 hex digits of its SHA-256.

Steps, under a lock (``<venv>.lock``, a folder) so concurrent launchers install once: pick a base Python >= 3.10
(``CODEACT_PYTHON``, ``python3``, ``python``), build ``<venv>.partial.<pid>`` with ``uv`` when it is on PATH, else
``venv`` + ``pip``, install hyperlight's requirements where the cheap pre-check says a hypervisor may run it, swap the
partial folder in and write the stamp (a copy of requirements.txt) last: a venv without it is never used.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from .errors import EXIT_BACKEND_UNAVAILABLE, CodeactError

STAMP = ".codeact-requirements.txt"
LOCK_WAIT_S = 600
MIN_PYTHON = (3, 10)
KEY_DIGITS = 16
INSTALL_FAILED = "installing the runtime failed (see above); check your network or proxy and run the command again"
NO_PYTHON = "no Python >= 3.10 found; install one, or set CODEACT_PYTHON to its path"
NO_VENV_MODULE = ("{base} cannot create venvs: the 'venv' module (ensurepip) is missing. On Debian/Ubuntu run: "
                  "sudo apt install python3-venv (or install uv: https://docs.astral.sh/uv/)")
PIP = ("-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off", "-q")

Runner = Callable[[Sequence[str]], int]


class BootstrapError(CodeactError, RuntimeError):
    """The venv could not be prepared; ``str()`` says what to do. Exit code 3, as a backend that cannot run."""

    exit_code = EXIT_BACKEND_UNAVAILABLE


def say(message: str) -> None:
    """One line of progress on stderr, prefixed like every launcher message."""
    sys.stderr.write(f"codeact: {message}\n")
    sys.stderr.flush()


def requirements_key(requirements: Path) -> str:
    """The shared venv's folder name for these requirements: SHA-256, first 16 hex digits."""
    return hashlib.sha256(requirements.read_bytes()).hexdigest()[:KEY_DIGITS]


def venv_python(venv: Path) -> Path:
    """The interpreter inside a venv, on this platform."""
    return venv / "Scripts" / "python.exe" if os.name == "nt" else venv / "bin" / "python"


def target_venv(root: Path, shared: Path | None) -> Path:
    """``ROOT/.venv``, or ``SHARED/<requirements key>``."""
    return root / ".venv" if shared is None else shared / requirements_key(root / "requirements.txt")


def is_ready(venv: Path, requirements: Path) -> bool:
    """Whether ``venv`` has its Python and a stamp byte-equal to ``requirements`` (what the launchers check)."""
    stamp = venv / STAMP
    try:
        return venv_python(venv).is_file() and stamp.read_bytes() == requirements.read_bytes()
    except OSError:
        return False


def run_quietly(argv: Sequence[str]) -> int:
    """Run a command with its output on stderr (stdout carries only the answer) and no stdin (it may be a program)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the launcher's, meant for this module only
    try:
        return subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(), env=env).returncode
    except OSError as exc:
        say(f"cannot run {argv[0]}: {exc}")
        return 127


def python_candidates(environ: Mapping[str, str]) -> list[str]:
    """``CODEACT_PYTHON`` first, then the usual names (``py`` too on Windows)."""
    names = [environ.get("CODEACT_PYTHON", ""), "python3", "python"] + (["py"] if os.name == "nt" else [])
    return [name for name in names if name]


def find_base_python(environ: Mapping[str, str], run: Runner = run_quietly,
                     which: Callable[[str], str | None] = shutil.which) -> str:
    """The first candidate that exists and is a Python >= 3.10; :class:`BootstrapError` if none is."""
    check = f"import sys; sys.exit(sys.version_info < {MIN_PYTHON!r})"
    for name in python_candidates(environ):
        found = which(name)
        if found and run([found, "-c", check]) == 0:
            return found
    raise BootstrapError(NO_PYTHON)


@contextmanager
def locked(lock: Path, wait_s: float = LOCK_WAIT_S, sleep: Callable[[float], None] = time.sleep) -> Iterator[None]:
    """Hold ``lock`` (a folder, atomic to create everywhere) for the block; wait up to ``wait_s`` for another holder."""
    waited = 0.0
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            if waited >= wait_s:
                raise BootstrapError(f"timed out waiting for {lock}; remove it if no install is running") from None
            sleep(1)
            waited += 1
    try:
        yield
    finally:
        shutil.rmtree(lock, ignore_errors=True)


def hyperlight_verdict(root: Path) -> str:
    """The cheap pre-check's ``yes...``/``no: ...`` for installing hyperlight; ``no`` when it cannot tell."""
    try:
        from .backends import precheck

        return str(precheck.decide(str(root / "settings.json")))
    except Exception as exc:  # noqa: BLE001 - a failing pre-check never blocks monty
        return f"no: the pre-check failed ({exc})"


def install(target: Path, root: Path, base: str, *, uv: str | None, run: Runner = run_quietly,
            verdict: Callable[[Path], str] = hyperlight_verdict) -> None:
    """Build a venv at ``target`` from ``base`` with the pinned requirements (and hyperlight's where it may run)."""
    requirements = root / "requirements.txt"
    python = str(venv_python(target))
    if uv:
        say("creating the venv with uv ...")
        if run([uv, "venv", "--no-config", "--quiet", "--python", base, str(target)]):
            raise BootstrapError(INSTALL_FAILED)
        say("installing pinned requirements (uv) ...")
        if run([uv, "pip", "install", "--no-config", "--python", python, "-r", str(requirements)]):
            raise BootstrapError(INSTALL_FAILED)
        extra: list[str] = [uv, "pip", "install", "--quiet", "--no-config", "--python", python, "-r"]
    else:
        if run([base, "-c", "import venv, ensurepip"]):
            raise BootstrapError(NO_VENV_MODULE.format(base=base))
        say(f"creating the venv with {base} -m venv ...")
        if run([base, "-m", "venv", str(target)]):
            raise BootstrapError(INSTALL_FAILED)
        say("installing pinned requirements with pip (first run only, about a minute) ...")
        if run([python, *PIP, "-r", str(requirements)]):
            raise BootstrapError(INSTALL_FAILED)
        extra = [python, *PIP, "-r"]
    hyperlight = root / "requirements-hyperlight.txt"
    if hyperlight.is_file() and verdict(root).startswith("yes"):
        say("installing hyperlight-sandbox (a hypervisor is available) ...")
        if run([*extra, str(hyperlight)]):
            say("hyperlight install failed; monty will be used")


def write_stamp(venv: Path, requirements: Path) -> None:
    """Copy requirements.txt into the venv as its stamp, atomically: the launchers then take the venv as ready."""
    partial = venv / f"{STAMP}.{os.getpid()}"
    partial.write_bytes(requirements.read_bytes())
    os.replace(partial, venv / STAMP)


def ensure(root: Path, shared: Path | None = None, *, environ: Mapping[str, str] | None = None,
           run: Runner = run_quietly, which: Callable[[str], str | None] = shutil.which,
           verdict: Callable[[Path], str] = hyperlight_verdict, wait_s: float = LOCK_WAIT_S,
           sleep: Callable[[float], None] = time.sleep) -> Path:
    """Make the venv for ``root``'s requirements ready (nothing to do when it is) and return its Python."""
    environ = os.environ if environ is None else environ
    requirements = root / "requirements.txt"
    if not requirements.is_file():
        raise BootstrapError(f"{requirements} is missing; restore it (copier update, or git restore) and retry")
    venv = target_venv(root, shared)
    if is_ready(venv, requirements):
        return venv_python(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with locked(venv.with_name(venv.name + ".lock"), wait_s, sleep):
        if is_ready(venv, requirements):  # another launcher finished it while this one waited
            return venv_python(venv)
        say(f"setting up the sandbox runtime in {venv}")
        base = find_base_python(environ, run, which)
        partial = venv.with_name(f"{venv.name}.partial.{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            install(partial, root, base, uv=which("uv"), run=run, verdict=verdict)
            shutil.rmtree(venv, ignore_errors=True)
            os.replace(partial, venv)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        write_stamp(venv, requirements)
        say("ready")
    return venv_python(venv)


def _terminate(signum: int, _frame: object) -> None:  # a signal handler
    raise SystemExit(128 + signum)  # unwinds the lock and the partial folder, as Ctrl-C does


def main(argv: Sequence[str] | None = None) -> int:
    """``python -S -m codeact.bootstrap ROOT [SHARED]``: print the ready venv's Python; 3 with a reason if not."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or len(args) > 2 or args[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -S -m codeact.bootstrap ROOT [SHARED]\n" + (__doc__ or ""))
        return 0 if args and args[0] in ("-h", "--help") else 2
    signal.signal(signal.SIGTERM, _terminate)
    root = Path(args[0]).resolve()  # the launcher passes `.codeact/bin/..` (string work only): said resolved
    shared = Path(args[1]).absolute() if len(args) > 1 and args[1] else None
    # `python -m venv`/`-m pip` put the current folder first on sys.path, and uv reads config files from it and its
    # parents: run them from the install folder, which programs cannot write, never from the workspace.
    with contextlib.suppress(OSError):
        os.chdir(root)
    try:
        python = ensure(root, shared)
    except BootstrapError as exc:
        say(str(exc))
        return exc.exit_code
    except OSError as exc:
        say(f"cannot prepare the venv: {exc}")
        return BootstrapError.exit_code
    except KeyboardInterrupt:
        return 130
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
