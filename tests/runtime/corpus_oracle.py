"""Run a corpus program in CPython with the same tools, to check the frozen expected answers of the corpus."""
from __future__ import annotations

import ast
import io
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from codeact.core.config import Settings
from codeact.errors import PolicyError, ToolError
from codeact.core.limits import Limits
from codeact.core.policy import Workspace
from codeact.tools.base import ToolContext
from codeact.tools.assemble import assemble


def run_in_cpython(code: str, root: Path, environ: dict[str, str]) -> tuple[Any, str]:
    """``(value of the last expression, printed text)`` of ``code`` run by the host's CPython over ``root``."""
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
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(tree, "<program>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<program>", "eval"), namespace) if last else None
    return value, out.getvalue()
