"""The built-in tools' descriptions and schemas come from generated data (codeact.tools.specs), so a cold run
imports no tool module and no ``inspect``; the data must be what the functions say, and a call still reaches them."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from codeact.core.catalog import BUILTINS, IN_PROCESS_TOOLS
from codeact.core.tool import tool_from_function
from codeact.tools import specgen
from codeact.tools.assemble import builtin_function, builtin_tool

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
TOOL_MODULES = {f"codeact.tools.{module}" for module in BUILTINS.values()}


def test_specs_file_is_what_the_functions_say() -> None:
    """Stale when a tool's signature or docstring changed: run ``python -m codeact.tools.specgen`` (in runtime/)."""
    assert specgen.SPECS_FILE.read_text(encoding="utf-8") == specgen.render()


def test_a_builtin_from_the_specs_equals_one_read_from_its_function() -> None:
    for name in BUILTINS:
        read = tool_from_function(builtin_function(name), source="builtin", skip_first=True)
        made = builtin_tool(name, None)  # type: ignore[arg-type]
        assert made._replace(call=None) == read._replace(call=None, in_process=name in IN_PROCESS_TOOLS)


def run_in_child(code: str, workspace: Path, config: Path) -> tuple[str, set[str]]:
    """What ``codeact run --code CODE`` printed in a fresh process, and the codeact modules it imported."""
    probe = ("import sys, io, contextlib; from codeact.cli import main; out = io.StringIO()\n"
             "with contextlib.redirect_stdout(out): rc = main(['run', '--code', sys.argv[1], '--workspace', sys.argv[2]])\n"
             "print(repr((rc, out.getvalue(), sorted(m for m in sys.modules if m.startswith('codeact')))))")
    env = {"PYTHONPATH": str(RUNTIME), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(config.parent),
           "CODEACT_CONFIG_DIR": str(config), "CODEACT_SERVER": "0", "LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-c", probe, code, str(workspace)], capture_output=True, text=True,
                          env=env, cwd=workspace, timeout=120, check=True)
    rc, printed, modules = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert rc == 0, done.stderr
    return printed, set(modules)


def test_a_trivial_run_imports_no_tool_module_and_a_call_imports_its_own(tmp_path: Path, user_config: Path) -> None:
    space = tmp_path / "space"
    space.mkdir()
    (space / "a.txt").write_text("hello\n", encoding="utf-8")
    printed, modules = run_in_child("print(1)", space, user_config)
    assert printed == "1\n"
    assert not modules & TOOL_MODULES, sorted(modules & TOOL_MODULES)
    printed, modules = run_in_child("print(view(path='a.txt'))", space, user_config)
    assert printed == "hello\n\n"
    assert modules & TOOL_MODULES == {"codeact.tools.files"}
