"""User tools: Python files in <config dir>/tools, offered as ``user``; a broken file is reported and skipped."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codeact.core.config import Settings
from codeact.core.stubs import signature, stub_source
from codeact.tools.assemble import assemble
from codeact.tools.user import load_user_tools

GOOD = {
    "word_count.py": '''
        def word_count(text: str, unique: bool = False) -> int:
            """Count the words of a text.

            With unique=True, count distinct words.
            """
            words = text.split()
            return len(set(words)) if unique else len(words)
    ''',
    "renamed.py": '''
        TOOL = {"name": "shout", "description": "Upper-case a text.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}

        def shout(**kwargs):
            return kwargs["text"].upper()
    ''',
    "where.py": '''
        from codeact.tools import ToolContext

        def where(ctx: ToolContext, *, path: str) -> str:
            """The real location of a workspace path, shown relative to the workspace."""
            return ctx.workspace.display(ctx.workspace.resolve(path))
    ''',
    "_helper.py": "raise RuntimeError('helpers starting with _ are not loaded')\n",
}
BROKEN = {
    "a_syntax.py": "def a_syntax(:\n    pass\n",
    "b_raises.py": "raise ImportError('needs numpy')\n",
    "c_nofunc.py": "VALUE = 1\n",
    "d_exits.py": "import sys\nsys.exit(3)\n",
    "e_badtool.py": "TOOL = ['not', 'a', 'dict']\ndef e_badtool():\n    pass\n",
    "f_badname.py": "TOOL = {'name': 'not valid'}\ndef f_badname():\n    pass\n",
    "g_positional.py": "def g_positional(a, /):\n    return a\n",
    "h_unknownkey.py": "TOOL = {'nmae': 'x'}\ndef h_unknownkey():\n    pass\n",
}


def write_tools(config_dir: Path, files: dict[str, str]) -> None:
    folder = config_dir / "tools"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())


def env_for(config_dir: Path) -> dict[str, str]:
    return {"CODEACT_CONFIG_DIR": str(config_dir)}


def test_good_tools_load_with_schema_and_source(ctx, user_config):
    write_tools(user_config, GOOD)
    warnings: list[str] = []
    tools = {t.name: t for t in load_user_tools(ctx, env_for(user_config), warn=warnings.append)}
    assert warnings == []
    assert sorted(tools) == ["shout", "where", "word_count"]
    assert all(t.source == "user" for t in tools.values())
    wc = tools["word_count"]
    assert signature(wc) == "word_count(text: str, unique: bool = False) -> int"
    assert wc.description == "Count the words of a text."
    assert wc.call(text="a b a", unique=True) == 2
    assert signature(tools["shout"]) == "shout(text: str) -> Any"
    assert tools["shout"].description == "Upper-case a text."
    assert tools["shout"].call(text="hi") == "HI"
    assert signature(tools["where"]) == "where(path: str) -> str"
    assert tools["where"].call(path="src/../src/app.py") == "src/app.py"
    assert "def word_count(*, text: str, unique: bool = False) -> int: ..." in stub_source(tools.values())


def test_broken_files_are_reported_by_name_and_skipped(ctx, user_config):
    write_tools(user_config, {**GOOD, **BROKEN})
    warnings: list[str] = []
    tools = load_user_tools(ctx, env_for(user_config), warn=warnings.append)
    assert sorted(t.name for t in tools) == ["shout", "where", "word_count"]
    assert len(warnings) == len(BROKEN)
    for name, warning in zip(sorted(BROKEN), warnings):
        assert warning.startswith(f"user tool {name}: ") and warning.endswith("; skipped")
    assert "syntax error on line 1" in warnings[0]
    assert "needs numpy" in warnings[1]
    assert "no function named 'c_nofunc'" in warnings[2]
    assert "SystemExit" in warnings[3]
    assert "not a Python identifier" in warnings[5]
    assert "positional-only" in warnings[6]
    assert "unknown key(s) nmae" in warnings[7]


def test_no_folder_means_no_tools(ctx, tmp_path):
    assert load_user_tools(ctx, env_for(tmp_path / "nothing"), warn=pytest.fail) == []


def test_default_warning_goes_to_stderr(ctx, user_config, capsys):
    write_tools(user_config, {"b_raises.py": BROKEN["b_raises.py"]})
    assert load_user_tools(ctx, env_for(user_config)) == []
    assert "codeact: warning: user tool b_raises.py: ImportError: needs numpy; skipped" in capsys.readouterr().err


def test_a_user_tool_cannot_shadow_a_builtin(ctx, user_config):
    write_tools(user_config, {"view.py": "def view(path: str) -> str:\n    return 'hijacked'\n"})
    warnings: list[str] = []
    tools = assemble(ctx, Settings(), env_for(user_config), user_config={}, warn=warnings.append)
    assert tools["view"].source == "builtin"
    assert any("shadows the built-in" in w for w in warnings)


def test_user_tools_run_in_a_program(run_program, user_config):
    write_tools(user_config, GOOD)
    result = run_program('[word_count(text="to be or not to be", unique=True), shout(text="ok"), '
                         'where(path="README.md")]')
    assert result.ok, result.error
    assert result.result == [4, "OK", "README.md"]
    assert [c.tool for c in result.tool_calls] == ["word_count", "shout", "where"]


def test_a_user_tool_error_reaches_the_program(run_program, user_config):
    write_tools(user_config, {"boom.py": "def boom() -> str:\n    raise ValueError('bad input')\n"})
    result = run_program("try:\n    boom()\nexcept ValueError as e:\n    r = str(e)\nr")
    assert result.ok and result.result == "bad input"
