"""The command line as an agent runs it: ``python -m codeact`` in a workspace, exit codes and the JSON shapes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
RUN_KEYS = {"ok", "backend", "backend_reason", "stdout", "result", "error", "tool_calls", "duration_ms", "notes",
            "stderr", "cut"}


@pytest.fixture
def cli(fixture_workspace: Path, user_config: Path):
    def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(user_config.parent), "LANG": "C.UTF-8",
                   "PYTHONPATH": str(RUNTIME), "CODEACT_CONFIG_DIR": str(user_config), "CODEACT_BACKEND": "monty",
                   **(env or {})}
        return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=fixture_workspace, env=environ,
                              input=stdin, capture_output=True, text=True, timeout=60)
    return run


def test_run_prints_output_then_the_value(cli):
    done = cli("run", "--code", 'print("hi")\nlen(glob(pattern="*.json"))')
    assert (done.returncode, done.stdout, done.stderr) == (0, "hi\n3\n", "")


def test_run_reads_stdin_and_files(cli, fixture_workspace):
    assert cli("run", "-", stdin="1 + 1").stdout == "2\n"
    (fixture_workspace / "prog.py").write_text('print(view(path="config/db.json"), end="")\n{"n": 1}')
    done = cli("run", "--file", "prog.py")
    assert done.returncode == 0 and done.stdout == '{\n  "host": "localhost",\n  "port": 5432\n}\n{"n": 1}\n'


def test_run_refuses_a_program_past_the_size_cap_from_stdin_or_a_file(cli, fixture_workspace):
    """The host parses a program with the interpreter held, where the deadline cannot stop it: past MAX_PROGRAM
    bytes a run is refused before anything parses it, with the limit named; one that fits runs."""
    from codeact.cmdline import MAX_PROGRAM

    big = "x = 1\n" * (MAX_PROGRAM // 6 + 1)
    (fixture_workspace / "big.py").write_text(big)
    for done in (cli("run", "-", stdin=big), cli("run", "--file", "big.py")):
        assert done.returncode == 1, done.stderr
        assert "SyntaxError: the program is too large: more than 256 KiB (262,144 bytes)" in done.stderr
    data = json.loads(cli("run", "--json", "-", stdin=big).stdout)
    assert data["ok"] is False and data["error"]["type"] == "SyntaxError" and "256 KiB" in data["error"]["message"]
    fits = f"s = '{'a' * (MAX_PROGRAM - 100)}'\nlen(s)"
    assert cli("run", "-", stdin=fits).stdout == f"{MAX_PROGRAM - 100}\n"


def test_the_size_cap_counts_utf8_bytes():
    from codeact.cmdline import MAX_PROGRAM, program_too_large, read_program

    assert program_too_large("a" * MAX_PROGRAM) is None
    assert program_too_large("a" * (MAX_PROGRAM + 1)) is not None
    assert program_too_large("é" * (MAX_PROGRAM // 2)) is None  # two bytes each: exactly the cap
    assert program_too_large("é" * (MAX_PROGRAM // 2 + 1)) is not None
    assert program_too_large("\U0001f600" * (MAX_PROGRAM // 4 + 1)) is not None  # four bytes each, a quarter
    import io

    assert len(read_program(io.StringIO("a" * (3 * MAX_PROGRAM)))) == MAX_PROGRAM + 1  # read no further


def test_run_json_shape(cli):
    done = cli("run", "--json", "--code", 'print("a")\ngrep(pattern="TODO", glob="*.md")')
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert set(data) == RUN_KEYS
    assert data["ok"] is True and data["backend"] == "monty" and data["stdout"] == "a\n" and data["error"] is None
    assert data["result"] == [{"path": "README.md", "line": 5, "text": "- TODO: write the real docs"}]
    assert [set(c) for c in data["tool_calls"]] == [{"tool", "ok", "ms"}]
    assert data["tool_calls"][0]["tool"] == "grep" and data["tool_calls"][0]["ok"] is True
    assert isinstance(data["duration_ms"], (int, float)) and isinstance(data["backend_reason"], str)


def test_program_error_exits_1_with_the_error(cli, fixture_workspace):
    done = cli("run", "--json", "--code", 'x = 1\nview(path="nope.txt")')
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert set(data) == RUN_KEYS and data["ok"] is False
    assert data["error"] == {"type": "FileNotFoundError", "message": "no such file or folder: nope.txt", "line": 2,
                             "hint": None}
    assert str(fixture_workspace) not in done.stdout
    plain = cli("run", "--code", "1 / 0")
    assert plain.returncode == 1 and "ZeroDivisionError" in plain.stderr


def test_usage_errors_exit_2(cli):
    assert cli("run").returncode == 2  # no program
    assert cli("run", "--code", "1", "--file", "x.py").returncode == 2
    assert cli("run", "--backend", "nope", "--code", "1").returncode == 2
    assert cli("run", "--file", "missing.py").returncode == 2
    assert cli("describe", "no_such_tool").returncode == 2
    assert cli().returncode == 2
    bad_limit = cli("run", "--code", "1", env={"CODEACT_MEMORY": "lots"})
    assert bad_limit.returncode == 2 and "memory" in bad_limit.stderr


def test_tools_json_manifest(cli, user_config):
    (user_config / "tools").mkdir()
    (user_config / "tools" / "hello.py").write_text('def hello(name: str) -> str:\n    """Greet."""\n    return name\n')
    (user_config / "tools" / "broken.py").write_text("def broken(:\n")
    done = cli("tools", "--json", env={"CODEACT_TOOLS": "web_fetch", "CODEACT_DISABLE": "bash"})
    assert done.returncode == 0
    manifest = json.loads(done.stdout)
    assert [t["name"] for t in manifest] == ["view", "create", "edit", "glob", "grep", "outline", "sql", "web_fetch",
                                             "previous_output", "hello"]
    assert all(set(t) == {"name", "description", "parameters", "returns", "source"} for t in manifest)
    by_name = {t["name"]: t for t in manifest}
    assert by_name["hello"]["source"] == "user" and by_name["grep"]["source"] == "builtin"
    assert by_name["grep"]["returns"] == "list[dict]"
    assert by_name["grep"]["parameters"]["required"] == ["pattern"]
    assert by_name["grep"]["parameters"]["properties"]["max_results"] == {"type": "integer", "default": 100000}
    assert "user tool broken.py: syntax error on line 1" in done.stderr


def test_tools_plain_and_describe(cli):
    listing = cli("tools")
    assert listing.returncode == 0
    assert "grep(pattern: str, path: str = '.', glob: str | None = None, ignore_case: bool = False, " \
           "max_results: int = 100000) -> list[dict]" in listing.stdout
    described = cli("describe", "sql")
    assert described.returncode == 0
    assert described.stdout.startswith("sql(query: str, db: str = ':memory:') -> list[dict]\n")
    assert "ATTACH, DETACH, VACUUM INTO and extension loading are refused" in described.stdout
    assert '"query"' in described.stdout


def test_help_for_every_command(cli):
    """Every subcommand's --help opens with a sentence saying what it does, after the usage."""
    from codeact.cli import COMMANDS

    for args in (["--help"], *([name, "--help"] for name in COMMANDS)):
        done = cli(*args)
        assert done.returncode == 0 and done.stdout.startswith("usage:"), (args, done.stdout, done.stderr)
        first = done.stdout.split("\n\n")[1].strip()
        assert first[:1].isupper() and first.endswith(".") and not first.startswith(("positional", "options")), \
            (args, first)
