"""The acceptance corpus of issue 13: programs models write for real tasks run on a realistic repository.

Valid programs (fixtures/corpus_programs.py) give exactly the answers in fixtures/corpus_expected.py, with no
refusal and no note. Invalid ones fail on the right line with a hint, and the rewrite the hint leads to passes;
a bad tool call is refused before any tool runs.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeact.core.config import Settings
from codeact.runner import RunResult, run
from tests.runtime.conftest import base_environ
from tests.runtime.corpus_oracle import run_in_cpython
from tests.runtime.fixtures.corpus_expected import EXPECTED
from tests.runtime.fixtures.corpus_programs import PROGRAMS
from tests.runtime.fixtures.corpus_workspace import FILES, build

# The sandbox words these JSON errors its own way ("Illegal trailing comma ..." where CPython says "Expecting
# property name ..."); the rest of each answer is the same.
WORDED_DIFFERENTLY = {"invalid_json", "json_error_position"}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return build((tmp_path / "repo").resolve())


@pytest.fixture
def sandbox(corpus: Path, user_config: Path) -> Callable[..., RunResult]:
    def _run(code: str, tools: dict[str, Any] | None = None) -> RunResult:
        return run(code, workspace=corpus, backend="monty", settings=Settings(), environ=base_environ(user_config),
                   tools=tools)
    return _run


TOOL_NOTES = {"grep_max_results": ["grep(): returned 3 of 20 matching lines, the first in path order (max_results=3; "
                                    "raise max_results= or narrow pattern, glob= or path=)"],
              # a glob that matches no file says so (issue 42 item 3): here, the broken link's target
              "broken_links": ["glob(): no file matches pattern='docs/nowhere.md' under path='.'"],
              "glob_exists": ["glob(): no file matches pattern='setup.py' under path='.'",
                              "glob(): no file matches pattern='app.log' under path='.'"],
              "cb_max_default_empty": ["glob(): no file matches pattern='*.rst' under path='.'"]}


def test_the_corpus_is_large_and_every_program_has_an_answer():
    assert len(PROGRAMS) >= 150
    assert set(PROGRAMS) == set(EXPECTED)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_valid_program_gives_the_exact_answer(sandbox, name):
    result = sandbox(PROGRAMS[name])
    assert result.ok, result.error
    assert (result.result, result.stdout) == EXPECTED[name]
    # nothing the type check found is worth a word on a valid program; a tool that returned less says so
    assert result.notes == TOOL_NOTES.get(name, [])


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in WORDED_DIFFERENTLY])
def test_cpython_gives_the_same_answer(corpus, user_config, name):
    """The frozen answers are Python's: CPython running the program with the same tools agrees."""
    assert run_in_cpython(PROGRAMS[name], corpus, base_environ(user_config)) == EXPECTED[name]


# ------------------------------------------------------------------------------------------- invalid programs
# name: (program, error type, line, text the message or hint must hold, the rewrite, its expected value)
INVALID: dict[str, tuple[str, str, int, str, str, Any]] = {
    "unclosed_call": ('hits = grep(pattern="TODO"\nlen(hits)\n', "SyntaxError", 1, "'(' was never closed",
                      'hits = grep(pattern="TODO")\nlen(hits)\n', 3),
    "unclosed_len": ('n = len(\nn\n', "SyntaxError", 1, "'(' was never closed", 'n = len("ab")\nn\n', 2),
    "missing_colon": ('for p in glob(pattern="docs/*.md")\n    print(p)\n', "SyntaxError", 1, "expected ':'",
                      'for p in glob(pattern="docs/*.md"):\n    print(p)\n', None),
    "unexpected_indent": ("x = 1\n  y = 2\n", "SyntaxError", 2, "unexpected indent", "x = 1\ny = 2\ny\n", 2),
    "unknown_tool": ('print("go")\nvew(path="README.md")[:8]\n', "TypeError", 2, "Did you mean view()?",
                     'print("go")\nview(path="README.md")[:8]\n', "# shopca"),
    "wrong_keyword": ('len(view(pth="README.md"))\n', "TypeError", 1, "view(path: str",
                      'len(view(path="README.md"))\n', 170),
    "unknown_keyword": ('len(grep(pattern="TODO", include="*.py"))\n', "TypeError", 1, "glob: str | None",
                        'len(grep(pattern="TODO", glob="*.py"))\n', 1),
    "missing_keyword": ('grep(glob="*.py")\n', "TypeError", 1, "grep(pattern: str",
                        'len(grep(pattern="import", glob="*.py"))\n', 19),
    "wrong_type": ('view(path=["README.md"])[:1]\n', "TypeError", 1, "Expected `str`",
                   'view(path="README.md")[:1]\n', "#"),
    "result_wrong_key": ('[h["file"] for h in grep(pattern="XXX")]\n', "KeyError", 1, "'path', 'line', 'text'",
                         '[h["path"] for h in grep(pattern="XXX")]\n', ["src/shopcart/util/text.py"]),
    "result_as_attribute": ('[h.path for h in grep(pattern="XXX")]\n', "AttributeError", 1, "item['path']",
                            '[h["path"] for h in grep(pattern="XXX")]\n', ["src/shopcart/util/text.py"]),
    "exception_attribute": (
        'import json\ntry:\n    json.loads(view(path="config/empty.json"))\nexcept json.JSONDecodeError as e:\n'
        '    out = e.msg\nout\n', "AttributeError", 5, "str(e)",
        'import json\ntry:\n    json.loads(view(path="config/empty.json"))\nexcept json.JSONDecodeError as e:\n'
        '    out = str(e)\nout\n', "Expecting value: line 1 column 1 (char 0)"),
    "module_ast": ('import ast\nlen(ast.parse(view(path="src/shopcart/cart.py")).body)\n', "ModuleNotFoundError", 1,
                   "`re` over view(path=...)",
                   'import re\nlen(re.findall(r"^(?:def|class) ", view(path="src/shopcart/cart.py"), re.M))\n', 2),
    "module_subprocess": ('import subprocess\n', "ModuleNotFoundError", 1, "bash(command=",
                          'bash(command="echo hi")["stdout"]\n', "hi\n"),
    "tool_in_groupby_key": ('import itertools\nps = glob(pattern="**/*.py")\n'
                            '[k for k, g in itertools.groupby(ps, key=lambda p: view(path=p).count("def "))]\n',
                            "NotImplementedError", 3, "key=sizes.get",
                            'import itertools\nps = glob(pattern="**/*.py")\n'
                            'sizes = {p: view(path=p).count("def ") for p in ps}\n'
                            '[k for k, g in itertools.groupby(ps, key=sizes.get)]\n', [0, 5, 2, 1, 5, 0, 3, 2]),
    "pathlib_pure": ('from pathlib import PurePosixPath\nPurePosixPath("a/b.py").suffix\n', "ImportError", 1,
                     "os.path", 'import os.path\nos.path.splitext("a/b.py")[1]\n', ".py"),
    "inheritance": ("class Base:\n    pass\nclass Err(Base):\n    pass\n", "NotImplementedError", 3,
                    "use a plain class", "class Err:\n    pass\ntype(Err()).__name__\n", "Err"),
    "del_statement": ('d = {"a": 1, "b": 2}\ndel d["a"]\nd\n', "NotImplementedError", 2, "d.pop(key)",
                      'd = {"a": 1, "b": 2}\nd.pop("a")\nd\n', {"b": 2}),
    "generator": ("def gen():\n    yield 1\nlist(gen())\n", "NotImplementedError", 2, "return a list",
                  "def gen():\n    return [1]\nlist(gen())\n", [1]),
    "property": ("class A:\n    @property\n    def x(self):\n        return 1\nA().x\n", "NotImplementedError", 2,
                 "plain attributes", "class A:\n    def __init__(self):\n        self.x = 1\nA().x\n", 1),
    "sys_exit": ('import sys\nfor p in glob(pattern="docs/*.md"):\n    if "API" in view(path=p):\n'
                 '        found = p\n        sys.exit(0)\n', "AttributeError", 5, "return early",
                 'def first():\n    for p in glob(pattern="docs/*.md"):\n        if "API" in view(path=p):\n'
                 '            return p\nfirst()\n', "docs/api.md"),
    "exception_two_args": ('n = len(glob(pattern="*.md"))\nif n != 5:\n    raise ValueError("expected 5 files", n)\n',
                           "RuntimeError", 3, "raise ValueError(f'",
                           'n = len(glob(pattern="*.md"))\ntry:\n    if n != 5:\n'
                           '        raise ValueError(f"expected 5 files, found {n}")\nexcept ValueError as e:\n'
                           '    out = str(e)\nout\n', "expected 5 files, found 4"),
    "ordered_dict": ('import collections\nd = collections.OrderedDict()\nd["b"] = 1\nlist(d)\n', "AttributeError", 2,
                     "use a plain dict", 'd = {}\nd["b"] = 1\nlist(d)\n', ["b"]),
    "open_outside": ('open("/etc/hostname").read()[:1]\n', "PermissionError", 1, "outside the workspace",
                     'open("README.md").read()[:1]\n', "#"),
    "open_write": ('open("new.txt", "w").write("x")\n', "PermissionError", 1, "create(path=",
                   'create(path="new.txt", file_text="x")\n', "created new.txt"),
}


# programs that failed in the sandbox before the prelude covered their gap (codeact.core.prelude): now CPython's answer
NOW_RUN: dict[str, tuple[str, Any]] = {
    "module_textwrap": ('import textwrap\ntextwrap.indent("a\\nb", "  ")\n', "  a\n  b"),
    "re_subn": ('import re\nre.subn(r"o", "0", "foo")\n', ("f00", 2)),
    "re_sub_function": ('import re\nre.sub(r"\\d", lambda m: m.group(0) * 2, "a1b2")\n', "a11b22"),
    "asdict": ("from dataclasses import dataclass, asdict\n@dataclass\nclass A:\n    x: int\nasdict(A(1))\n", {"x": 1}),
}


@pytest.mark.parametrize("name", list(NOW_RUN))
def test_programs_the_prelude_covers_give_cpythons_answer(sandbox, name):
    code, expected = NOW_RUN[name]
    namespace: dict[str, Any] = {}
    exec(compile(code.rsplit("\n", 2)[0] + "\n_value = " + code.rstrip("\n").rsplit("\n", 1)[-1], "p", "exec"),
         namespace)
    assert namespace["_value"] == expected  # the frozen answer is CPython's
    result = sandbox(code)
    assert result.ok, result.error
    assert result.result == expected


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_program_is_told_the_truth_and_one_rewrite_passes(sandbox, name):
    code, kind, line, needle, fixed, value = INVALID[name]
    result = sandbox(code)
    assert not result.ok
    assert (result.error.type, result.error.line) == (kind, line), result.error
    assert needle in f"{result.error.message}\n{result.error.hint}", result.error
    assert result.stdout == "" and result.notes == []
    rewritten = sandbox(fixed)
    assert rewritten.ok, rewritten.error
    assert rewritten.result == value


@pytest.mark.parametrize("code, line", [
    ('create(path="made.txt", file_text="x")\nview(pth="README.md")\n', 2),
    ('create(path="made.txt", file_text="x")\nvew(path="README.md")\n', 2),
    ('create(path="made.txt", file_text="x")\nview("README.md")\n', 2),
    ('create(path="made.txt", file_text="x")\ngrep(pattern=1)\n', 2),
    ('create(path="made.txt", file_text="x")\nfor p in glob(pattern="*.md"):\n    edit(path=p, old="a", new="b")\n', 3),
])
def test_a_bad_tool_call_is_refused_before_any_tool_runs(sandbox, corpus, code, line):
    result = sandbox(code)
    assert not result.ok and result.error.type == "TypeError" and result.error.line == line
    assert "no tool ran" in result.error.message
    assert result.tool_calls == [] and not (corpus / "made.txt").exists()


def test_a_positional_tool_call_is_shown_rewritten_and_the_rewrite_runs(sandbox):
    code = 'print("start")\nhits = grep("TODO", "src", glob="*.py")\n[h["line"] for h in hits]\n'
    result = sandbox(code)
    assert result.error.message.startswith("grep() takes keyword arguments only (line 2;")
    fix = result.error.hint.split("write ", 1)[1]
    assert fix == 'grep(pattern="TODO", path="src", glob="*.py")'
    rewritten = sandbox(code.replace('grep("TODO", "src", glob="*.py")', fix))
    assert rewritten.ok and rewritten.result == [19]


def test_syntax_errors_show_cpythons_caret(sandbox):
    result = sandbox('x = 1\ntotal = len(glob(pattern="*.md")\nprint(total)\n')
    assert result.error.type == "SyntaxError" and result.error.line == 2
    assert result.error.message == "'(' was never closed\n    total = len(glob(pattern=\"*.md\")\n               ^"


def test_newer_syntax_the_sandbox_accepts_is_never_refused(sandbox):
    """PEP 701 f-strings (Python 3.12) parse in the sandbox whatever the host's Python is."""
    result = sandbox('h = grep(pattern="XXX")[0]\nf"{h["path"]}:{h["line"]}"\n')
    assert result.ok, result.error
    assert result.result == "src/shopcart/util/text.py:11"


def test_findings_about_other_code_are_notes_not_refusals(sandbox):
    result = sandbox('def f(a):\n    return a\ndef unused():\n    f(1, 2)\nlen(glob(pattern="docs/*.md"))\n')
    assert result.ok and result.result == 2
    assert result.notes == ["line 4: Too many positional arguments to function `f`: expected 1, got 2 "
                            "(found by the type check; the program ran anyway)"]


def test_notes_reach_stderr_and_json_never_stdout(corpus, user_config):
    import json
    import os
    import subprocess
    import sys

    code = 'def f(a):\n    return a\ndef unused():\n    f(1, 2)\nprint("done")\n'
    env = {**base_environ(user_config), "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "runtime"),
           "CODEACT_BACKEND": "monty"}
    args = [sys.executable, "-m", "codeact", "run", "--workspace", str(corpus), "--code", code]
    plain = subprocess.run(args, capture_output=True, text=True, env=env, cwd=corpus, timeout=60)
    assert plain.returncode == 0 and plain.stdout == "done\n"
    assert plain.stderr.startswith("note: line 4: Too many positional arguments to function `f`")
    data = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, env=env, cwd=corpus,
                                     timeout=60).stdout)
    assert data["ok"] and data["stdout"] == "done\n" and data["result"] is None
    assert [n.split(":")[0] for n in data["notes"]] == ["line 4"]
    assert os.path.exists(corpus / "README.md")


def test_fixture_has_the_edge_cases_models_meet():
    assert b"\r\n" in FILES["src/shopcart/cli.py"].encode() if isinstance(FILES["src/shopcart/cli.py"], str) else True
    assert "import sys, os\n" in FILES["src/shopcart/cart.py"]
    with pytest.raises(SyntaxError):
        compile(FILES["src/shopcart/legacy.py"], "legacy.py", "exec")


# ------------------------------------------------------------------------- the programs the stamped text teaches
TEMPLATE = Path(__file__).resolve().parents[2] / "template"
PATTERNS = TEMPLATE / "{{ skills_dir }}" / "codeact" / "references" / "patterns.md.jinja"


def _blocks(path: Path, opening: str, closing: str) -> list[str]:
    import re

    return re.findall(rf"{re.escape(opening)}\n(.*?\n){re.escape(closing)}", path.read_text(encoding="utf-8"), re.S)


def _sandbox_json_errors() -> list[dict[str, str]]:
    return EXPECTED["invalid_json"][0]


def _defined(kinds: tuple[type, ...]) -> dict[str, list[Any]]:
    """What ``ast`` finds in each Python file of the corpus that parses: the oracle of the outline patterns."""
    import ast

    found: dict[str, list[Any]] = {}
    for rel, text in FILES.items():
        if rel.endswith(".py"):
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            found[rel] = [node for node in ast.walk(tree) if isinstance(node, kinds)]
    return found


def _ignored(rel: str) -> bool:
    """The corpus's .gitignore (``build/``, ``*.log``, ``__pycache__/``), read as git reads it."""
    return rel.startswith("build/") or rel.endswith(".log") or "__pycache__/" in rel


_TODOS = [f"{rel}:{n}: {line.strip()}" for rel, text in sorted(FILES.items()) if isinstance(text, str)
          and not _ignored(rel) for n, line in enumerate(text.split("\n"), 1) if "TODO" in line]
_MD_LINES = sorted(((rel, len(text.splitlines())) for rel, text in FILES.items() if rel.endswith(".md")),
                   key=lambda kv: kv[1], reverse=True)[:3]
_JSON_IMPORTS = sorted(f"{rel}:{node.lineno}: json" for rel, nodes in _defined((__import__("ast").Import,)).items()
                       for node in nodes if any(a.name == "json" for a in node.names))
_FUNCTIONS = sorted(((rel, len(nodes)) for rel, nodes in _defined((__import__("ast").FunctionDef,
                                                                   __import__("ast").AsyncFunctionDef)).items()
                     if nodes), key=lambda kv: -kv[1])[:5]
PATTERN_ANSWERS: list[tuple[Any, str]] = [
    (len(_TODOS), "".join(line + "\n" for line in _TODOS)),
    (_MD_LINES, ""),
    (_sandbox_json_errors(), ""),
    (_JSON_IMPORTS, ""),
    (_FUNCTIONS, ""),
    (["src/shopcart/util/text.py", "tests/test_cart.py"], ""),
    (["Crash on empty cart", "Add regions"], ""),  # the MCP chain, on a stand-in server named "issues"
    ({p: len(FILES[p]) for p in ["config/bad.json", "config/empty.json", "config/regions.json",
                                 "config/settings.json"]}, ""),
]


@pytest.mark.parametrize("index", range(len(PATTERN_ANSWERS)))
def test_every_pattern_in_the_skill_gives_the_exact_answer(sandbox, corpus, index):
    blocks = _blocks(PATTERNS, "```python", "```")
    assert len(blocks) == len(PATTERN_ANSWERS)
    result = sandbox(blocks[index], tools=_issues_server() if "issues." in blocks[index] else None)
    assert result.ok, result.error
    assert (result.result, result.stdout) == PATTERN_ANSWERS[index]
    if index == 5:  # the batch edit really renamed every call
        import re
        text = (corpus / "tests/test_cart.py").read_text()
        assert not re.search(r"\bold_name\b", text) and "import new_name" in text and "def test_old_name" in text


def _issues_server() -> dict[str, Any]:
    """Stand-ins for an MCP server named "issues" with list_issues(state) and get_issue(id)."""
    from codeact.core.tool import Tool

    issues = {7: ("open", "Crash on empty cart"), 9: ("closed", "Old bug"), 12: ("open", "Add regions")}

    def list_issues(state: str) -> list[dict[str, Any]]:
        return [{"id": i, "state": s} for i, (s, _) in issues.items() if s == state]

    def get_issue(id: int) -> dict[str, Any]:
        return {"id": id, "title": issues[id][1]}

    def schema(name: str, kind: str) -> dict[str, Any]:
        return {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}

    return {"issues.list_issues": Tool("issues.list_issues", "list issues", schema("state", "string"), "list[dict]",
                                       list_issues, source="mcp"),
            "issues.get_issue": Tool("issues.get_issue", "one issue", schema("id", "integer"), "dict", get_issue,
                                     source="mcp")}


@pytest.mark.parametrize("partial", [TEMPLATE / "_partials" / "run.md.jinja",
                                     TEMPLATE / "{{ instructions_dir }}" / "codeact.instructions.md.jinja"])
def test_the_example_program_of_the_instructions_runs(sandbox, partial):
    (program,) = _blocks(partial, "run - <<'PY'", "PY")
    result = sandbox(program)
    assert result.ok, result.error
    assert result.stdout == "".join(line + "\n" for line in _TODOS)  # every file of every language
    assert result.result == (len(_TODOS) if "len(hits)" in program else None)


@pytest.mark.parametrize("backend", ["monty", "auto"])
def test_the_subset_text_lists_what_works_and_what_fails_with_its_replacement(sandbox, backend):
    import re

    import jinja2

    from codeact.core.limits import Limits

    text = jinja2.Template((TEMPLATE / "_partials" / "subset.md.jinja").read_text(encoding="utf-8")).render(
        backend=backend, limits=Limits().described())
    works, fails = text.split("- Works:")[1].split("- Fails")
    modules = re.findall(r"`([\w.]+)`", works.split("modules", 1)[1])
    assert {"datetime", "tomllib", "re", "json", "collections"} <= set(modules)
    proof = sandbox(f"import {', '.join(modules)}\nd = {{'a': 1, 'b': 2}}\n"
                    "(max(d, key=d.get), re.search(r'(b)', 'abc').group(1))\n")
    assert proof.ok and proof.result == ("b", "b")  # every module named imports; the idioms named work
    # each gap is named with the replacement that INVALID above shows passing
    for gap, instead, case in [("class inheritance", "`ValueError`", "inheritance"), ("`yield`", "build a",
                               "generator"), ("`del`", "`d.pop(k)`", "del_statement"),
                               ("`e.msg`", "`str(e)`", "exception_attribute"),
                               ("`groupby(key=...)`", "compute the", "tool_in_groupby_key"),
                               ("`ast`", "`outline`", "module_ast"), ("`subprocess`", "`bash`", "module_subprocess")]:
        assert gap in fails and instead in fails and case in INVALID, gap


# --------------------------------------------------------------------- a real third-party repository: pallets/click
@pytest.fixture
def click_repo(tmp_path: Path) -> Path:
    """click's own modules (the repository the issue was tried on), as installed in the test environment."""
    import shutil

    import click

    root = (tmp_path / "click-repo").resolve()
    shutil.copytree(Path(click.__file__).parent, root / "src" / "click", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_import_pattern_finds_every_import_in_click(click_repo, user_config):
    import ast

    truth = []
    for path in sorted((click_repo / "src" / "click").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            truth += [f"{path.relative_to(click_repo).as_posix()}:{node.lineno}: {n}" for n in names if "json" in n]
    program = _blocks(PATTERNS, "```python", "```")[3]
    result = run(program, workspace=click_repo, backend="monty", settings=Settings(),
                 environ=base_environ(user_config))
    assert result.ok, result.error
    assert sorted(result.result, key=lambda s: (s.split(":")[0], int(s.split(":")[1]))) == truth


def test_bound_method_keys_on_click(click_repo, user_config):
    import re
    from collections import Counter

    program = ('from collections import Counter\n'
               'c = Counter(h["path"] for h in grep(pattern=r"^\\s*(import|from)\\s", glob="*.py"))\n'
               'top = max(c, key=c.get)\n'
               'least = sorted(c, key=c.get)[:3]\n'
               '(top, c[top], least)\n')
    counts: Counter[str] = Counter()
    for path in sorted((click_repo / "src" / "click").glob("*.py"), key=lambda p: p.name):
        rel = path.relative_to(click_repo).as_posix()
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"^\s*(import|from)\s", line):
                counts[rel] += 1
    top = max(counts, key=counts.get)
    result = run(program, workspace=click_repo, backend="monty", settings=Settings(),
                 environ=base_environ(user_config))
    assert result.ok, result.error
    assert result.result == (top, counts[top], sorted(counts, key=counts.get)[:3])
