"""Run a corpus program in CPython with the same tools, to check the frozen expected answers of the corpus, and
compare what the sandbox answered with it (the held-out corpus, benchmarks/bench_corpus.py)."""
from __future__ import annotations

import ast
import io
import json
import os
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, NamedTuple

from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import PolicyError, ToolError
from codeact.tools.assemble import assemble


def run_in_cpython(code: str, root: Path, environ: dict[str, str]) -> tuple[Any, str]:
    """``(value of the last expression, printed text)`` of ``code`` run by the host's CPython over ``root``."""
    value, out, _err = run_in_cpython_streams(code, root, environ)
    return value, out


def run_in_cpython_streams(code: str, root: Path, environ: dict[str, str]) -> tuple[Any, str, str]:
    """``(value, stdout, stderr)`` of ``code`` run by the host's CPython with ``root`` as its working directory
    (so ``open``, ``pathlib`` and ``os`` see the workspace as the sandbox's do)."""
    space = Workspace.at(root, environ=environ)
    ctx = ToolContext(workspace=space, limits=Limits(), environ=dict(environ))
    tools = assemble(ctx, Settings(), environ, user_config={})

    def bind(tool: Any) -> Any:
        def call(**kwargs: Any) -> Any:
            try:
                return tool.call(**kwargs)
            except PolicyError as exc:  # as the runner hands them to a program
                raise PermissionError(str(exc)) from None
            except ToolError as exc:
                raise RuntimeError(str(exc)) from None
        return call

    namespace: dict[str, Any] = {name: bind(tool) for name, tool in tools.items() if "." not in name}
    namespace["__name__"] = "__main__"  # as `python -` runs a program: `if __name__ == "__main__":` holds
    tree = ast.parse(code)
    tail = tree.body[-1] if tree.body else None
    last = tail if isinstance(tail, ast.Expr) else None
    if last is not None:
        tree.body.pop()
    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    os.chdir(root)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            exec(compile(tree, "<program>", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), "<program>", "eval"), namespace) if last else None
    finally:
        os.chdir(before)
    return value, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------------------ the held-out corpus
SUBSET = Path(__file__).resolve().parent / "fixtures" / "requests_subset.tar.gz"
SUBSET_SOURCE = "psf/requests at 1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e (a subset: src/, a few tests, top files)"


def subset_files() -> dict[str, str]:
    """The files of the vendored psf/requests subset, by path."""
    with tarfile.open(SUBSET) as archive:
        return {m.name: archive.extractfile(m).read().decode("utf-8")  # type: ignore[union-attr]
                for m in archive.getmembers() if m.isfile()}


def repo_files(path: Path) -> dict[str, str]:
    """The text files of a checkout (``git archive HEAD | tar -x``), by path: what the benchmark stamps."""
    files: dict[str, str] = {}
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in names:
            full = Path(folder) / name
            try:
                files[full.relative_to(path).as_posix()] = full.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
    return files


def normal(value: Any) -> Any:
    """A value as ``codeact run --json`` carries it: JSON data, or the ``repr`` of what is not JSON."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)


class Verdict(NamedTuple):
    """How one program fared: ``identical`` (same value, stdout and stderr as CPython); ``loud`` (the run failed,
    or said something: an error, a note); a program neither identical nor loud is a silent wrong answer."""

    name: str
    identical: bool
    loud: bool
    detail: str
    said: str = ""  # what a loud run said first: "TypeError: message", "note: ...", "cut"; else ""

    @property
    def silent_wrong(self) -> bool:
        return not self.identical and not self.loud


def judge(name: str, expected: tuple[Any, str, str], exit_code: int, shown: dict[str, Any]) -> Verdict:
    """Compare a ``codeact run --json`` object (``shown``; exit code ``exit_code``) with CPython's answer."""
    value, out, err = expected
    got = (shown.get("result"), shown.get("stdout"), shown.get("stderr", ""))
    want = (normal(value), out, err)
    identical = exit_code == 0 and shown.get("ok") is True and got == want and not shown.get("cut")
    loud = exit_code != 0 or bool(shown.get("error")) or bool(shown.get("notes")) or bool(shown.get("cut"))
    detail = "" if identical else f"expected {want!r:.300}, got {got!r:.300}; error {shown.get('error')!r:.300}; " \
                                  f"notes {shown.get('notes')!r:.300}"
    return Verdict(name, identical, loud, detail, _said(shown, exit_code) if loud and not identical else "")


def _said(shown: dict[str, Any], exit_code: int) -> str:
    error = shown.get("error") or {}
    if error:
        message = str(error.get("message") or "").strip().splitlines()
        return f"{error.get('type') or 'error'}: {message[0] if message else ''}"
    if shown.get("notes"):
        return f"note: {shown['notes'][0]}"
    return "cut" if shown.get("cut") else f"exit {exit_code}"
