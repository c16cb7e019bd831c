"""Issue 24 rules 2-5 through what users run: the stamped launcher in a git repository holding a real repository
(the vendored psf/requests subset). Programs models write run right, answers match CPython's, a cut output keeps
the answer, and every hint's suggested rewrite is itself accepted."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, make_repo
from tests.runtime.corpus_oracle import judge, run_in_cpython_streams, subset_files
from tests.runtime.fixtures.heldout_programs import PROGRAMS, QUICK

CUT = re.compile(r'\[cut: (\d+) more bytes, (\d+) lines; read them with previous_output\(run="([A-Za-z0-9]{8,})", '
                 r'first_line=(\d+)\)\]')


@pytest.fixture(scope="module")
def project(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from copier import run_copy

    path = make_repo(tmp_path_factory.mktemp("idioms") / "requests", subset_files())
    run_copy(str(template_src), path, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True,
             overwrite=True)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


@pytest.fixture(scope="module")
def env(venv_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    runtime = tmp_path_factory.mktemp("xdg")
    runtime.chmod(0o700)
    return {"CODEACT_VENV": str(venv_dir), "XDG_RUNTIME_DIR": str(runtime), "CODEACT_SERVER": "0"}


def codeact(project: Path, env: dict[str, str], code: str, *extra: str,
            more_env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([str(project / ".codeact/bin/codeact"), "run", "--json", *extra, "--code", code],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env, **(more_env or {})})
    return done.returncode, json.loads(done.stdout)


def plain(project: Path, env: dict[str, str], code: str, more_env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project / ".codeact/bin/codeact"), "run", "--code", code], cwd=project,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env, **(more_env or {})})


def same_as_cpython(project: Path, env: dict[str, str], code: str) -> None:
    expected = run_in_cpython_streams(code, project, dict(os.environ))
    rc, shown = codeact(project, env, code)
    verdict = judge("program", expected, rc, shown)
    assert verdict.identical, verdict.detail


# ------------------------------------------------------------------------------------ rule 2: the file system
FS_IDIOMS = {
    "os.walk": 'import os\nn = 0\nfor root, dirs, files in os.walk("."):\n    dirs[:] = [d for d in dirs if d != ".git"]'
               '\n    n += len([f for f in files if f.endswith(".py")])\nn',
    "rglob": 'from pathlib import Path\nsorted(str(p) for p in Path("src").rglob("*.py"))',
    "glob": 'from pathlib import Path\nsorted(p.name for p in Path(".").glob("*.toml"))',
    "getcwd": "import os\nos.getcwd()",
    "listdir": 'import os\nsorted(os.listdir("src/requests"))',
    "os.path.exists": 'import os\n[os.path.exists(p) for p in ("README.md", "nope.md", "src")]',
    "open": 'with open("src/requests/__version__.py") as f:\n    lines = f.readlines()\nlines[-3:]',
    "read_text": 'from pathlib import Path\nlen(Path("src/requests/models.py").read_text().splitlines())',
    "exists/is_file": 'from pathlib import Path\n[(Path(p).exists(), Path(p).is_file()) for p in ("setup.py", "src")]',
    "iterdir": 'from pathlib import Path\nsorted(p.name for p in Path("tests").iterdir())',
    "enumerate(file)": 'with open("tox.ini") as f:\n    found = [i for i, line in enumerate(f, 1) if "envlist" in line]\n'
                       'found',
}


@pytest.mark.parametrize("idiom", list(FS_IDIOMS))
def test_file_system_idioms_answer_as_cpython_over_the_workspace(project, env, idiom):
    same_as_cpython(project, env, FS_IDIOMS[idiom])


def test_the_file_system_is_the_workspace_only_and_writes_name_the_write_tools(project, env):
    rc, shown = codeact(project, env, 'open("/etc/passwd").read()')
    assert rc == 1 and shown["error"]["type"] == "PermissionError" and "outside the workspace" in shown["error"]["message"]
    for code in ('open("new.txt", "w").write("x")', 'from pathlib import Path\nPath("new.txt").write_text("x")'):
        rc, shown = codeact(project, env, code)
        assert rc == 1 and shown["error"]["type"] == "PermissionError", shown
        assert "create(path=" in shown["error"]["message"]
    assert not (project / "new.txt").exists()
    rc, shown = codeact(project, env, 'import os\nos.environ["HOME"]')
    assert rc == 1 and shown["error"]["type"] == "PermissionError"


def test_hasattr_and_getattr_answer_as_cpython_on_built_in_values(project, env):
    same_as_cpython(project, env, '(hasattr({}, "keys"), hasattr("s", "upper"), getattr("x", "upper", None) is not None,'
                                  ' getattr("x", "upper")(), hasattr([], "nope"), callable(len), callable(3))')
    same_as_cpython(project, env, 'names = ["keys", "append", "upper", "nope", "__len__"]\n'
                                  '[[hasattr(v, n) for n in names] for v in ({}, [], "s", 3)]')


# ------------------------------------------------------------------------------ rule 3: a cut keeps the answer
def test_a_cut_output_keeps_head_tail_value_and_notes_and_reads_the_middle_back(project, env):
    code = ('for i in range(1, 4001):\n    print(f"line {i:05d}")\nhits = grep(pattern="import", path="src")\n'
            'print("total:", 4000)\nlen(hits)')
    done = plain(project, env, code, {"CODEACT_TOOL_RESULT": "2000"})  # the grep result is cut: a note
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "line 00001"
    cut = next(CUT.fullmatch(line) for line in lines if CUT.fullmatch(line))
    assert lines[-2] == "total: 4000" and re.fullmatch(r"\d+", lines[-1])  # the tail and the value
    assert "note: grep(): returned" in done.stderr
    assert len((done.stdout + done.stderr).encode()) <= 16 * 1024
    first = int(cut.group(4))
    assert lines[first - 2] == f"line {first - 1:05d}"  # the head ends just before the cut
    back = plain(project, env, f'previous_output(run="{cut.group(3)}", first_line={first}, last_line={first})')
    assert back.returncode == 0 and back.stdout.strip() == json.dumps(f"line {first:05d}\n")


def test_json_keeps_the_value_of_a_cut_run(project, env):
    rc, shown = codeact(project, env, 'for i in range(3000):\n    print("x" * 20)\n42')
    assert rc == 0 and shown["result"] == 42 and shown["cut"] is not None
    assert CUT.search(shown["stdout"]) and shown["stdout"].endswith("x" * 20 + "\n")


# ------------------------------------------------------------------------------------ rule 4: valid programs run
VALID = {
    "grep(**opts)": 'opts = {"pattern": "def ", "glob": "*.py", "path": "src"}\nlen(grep(**opts))',
    "grep(pattern=w, **common)": 'common = {"glob": "*.py", "ignore_case": True, "path": "src"}\nw = "import"\n'
                                 'len(grep(pattern=w, **common))',
    "stderr": 'import sys\nprint("to stderr", file=sys.stderr)\nprint("to stdout")',
    "dataclass value": 'from dataclasses import dataclass\n@dataclass\nclass P:\n    name: str\n    n: int\n'
                       '[P("api", 3), P("x", 1)]',
    "statistics": 'import statistics\n(statistics.mean([1, 2, 4]), statistics.median([3, 1, 2]))',
    "callable": 'def f():\n    return 1\n[callable(f), callable(len), callable("s")]',
    "glob module": 'import glob\nsorted(glob.glob("src/**/*.py", recursive=True))[:3]',
    # issue 45 item 1: answers the sandbox gave differently with exit 0
    "re.sub \\1_": 'import re\n[re.sub(r"([a-z])([A-Z])", r"\\1_\\2", n).lower() for n in ("camelCase", "getHTTPResponse")]',
    "re $ and \\Z": 'import re\n[bool(re.search(p, "ab\\n")) for p in (r"b$", r"b\\Z", r"(?m)b$", r"^a.$")]',
    "re $ dynamic": 'import re\npats = [r"b$", r"\\w+\\Z"]\n[re.findall(p, "ab\\n") for p in pats]',
    "re.ASCII": 'import re\n(re.findall(r"\\w+", "café au lait", re.ASCII), re.findall(r"(?a)\\bé", "é"))',
    "compiled sub": 'import re\nc = re.compile(r"(\\d+)")\nc.sub(r"<\\1>", "a1b22")',
    "re.sub function": 'import re\nre.sub(r"\\d+", lambda m: str(int(m[0]) * 2), "a1b22")',
    "set of ints": 'list({3, 1, 2}), {10, 2, 33}, sorted({3, 1})',
    "json default": 'import json\nfrom datetime import date\njson.dumps({"d": date(2024, 1, 2), "s": {2}}, default=str)',
    "1 and True": '({1: "a", True: "b"}, {0: "x", False: "y", 1.0: "z"}, {True, 1})',
    # item 2
    "read_text(encoding=)": 'from pathlib import Path\nlen(Path("README.md").read_text(encoding="utf-8"))',
    "open(errors=)": 'with open("README.md", errors="replace") as f:\n    n = len(f.read())\nn',
    "open(encoding=latin-1)": 'open("README.md", encoding="latin-1").read()[:8]',
    # item 3
    "textwrap": 'import textwrap\n(textwrap.dedent("  a\\n  b"), textwrap.fill("word " * 20, width=30))',
    "difflib": 'import difflib\n"".join(difflib.unified_diff(["a\\n", "b\\n"], ["a\\n", "c\\n"], "x", "y"))',
    "heapq": 'import heapq\nh = []\nfor v in (5, 1, 4, 1):\n    heapq.heappush(h, v)\n([heapq.heappop(h) for _ in range(4)], '
             'heapq.nlargest(2, [3, 9, 4]))',
    "configless modules": 'import shlex, string, html\nfrom urllib.parse import quote, urlencode\n(shlex.split("a \'b c\'"), '
                          'string.ascii_lowercase[:3], html.escape("<a>"), quote("a b"), urlencode({"q": "x y"}))',
    "io.StringIO": 'import io\nbuf = io.StringIO()\nbuf.write("a")\nprint("b", end="")\nbuf.getvalue()',
    "pprint": 'import pprint\npprint.pprint({"k": list(range(30))})',
    "functools": 'from functools import cmp_to_key\nsorted(["b", "a", "c"], key=cmp_to_key(lambda x, y: (x < y) - (x > y)))',
    "ChainMap": 'from collections import ChainMap\ncm = ChainMap({"a": 1}, {"a": 2, "b": 3})\n(cm["a"], cm["b"], sorted(cm))',
    "TypedDict": 'from typing import TypedDict\nclass Hit(TypedDict):\n    path: str\n    line: int\nh = Hit(path="a", line=1)\nh',
    # item 4
    "dataclass order": 'from dataclasses import dataclass, replace, fields, asdict\n@dataclass(order=True)\nclass V:\n'
                       '    major: int\n    minor: int = 0\nvs = [V(1, 2), V(0, 9), V(1, 0)]\n'
                       '(sorted(vs), max(vs), V(1) < V(2), replace(vs[0], minor=5), [f.name for f in fields(V(1))], '
                       'asdict(vs[1]))',
    "__lt__ and __len__": 'class Job:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, other):\n'
                          '        return self.n < other.n\n    def __len__(self):\n        return self.n\n'
                          'jobs = [Job(3), Job(1)]\n([j.n for j in sorted(jobs)], len(jobs[0]), min(jobs).n)',
    "vars": 'from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: str\nvars(P(1, "a"))',
    # item 5
    "dict.fromkeys with key=len": 'msgs = ["b", "a", "b"]\nlongest = max(msgs, key=len)\nlist(dict.fromkeys(msgs))',
    "str.maketrans": '"hello".translate(str.maketrans("el", "ip")), "a-b".translate(str.maketrans({"-": "_"}))',
    "key=os.path.getsize": 'import os\nsorted(["README.md", "setup.py"], key=os.path.getsize)',
    "configparser": 'import configparser\ncp = configparser.ConfigParser()\ncp.read_string("[a]\\nX = 1\\ny = %(x)s2\\n[b]\\nz: on")\n'
                    '(cp.sections(), cp.get("a", "y"), cp["a"]["x"], cp.getboolean("b", "z"), cp.has_option("b", "q"), '
                    'sorted(cp["a"]))',
    "urlparse": 'from urllib.parse import urlparse\nu = urlparse("https://user@example.com:8080/p/a?q=1#f")\n'
                '(u.scheme, u.netloc, u.hostname, u.port, u.path, u.query, u.fragment, u[1])',
    "string.Template": 'from string import Template\nt = Template("$who likes ${what}; $$5")\n'
                       '(t.substitute(who="tim", what="py"), t.safe_substitute(who="x"))',
    "set methods": 'groups = [[1, 2, 3], [2, 3], [3, 2, 9]]\n(sorted(set.intersection(*(set(g) for g in groups))), '
                   'sorted({1}.union({2}, {3})))',
    "field(compare=False)": 'from dataclasses import dataclass, field\n@dataclass(order=True)\nclass M:\n    n: int\n'
                            '    name: str = field(compare=False)\nms = [M(2, "a"), M(1, "z"), M(2, "b")]\n'
                            'ms.sort(reverse=True)\n[m.name for m in ms]',
    "vars of a plain object": 'class S:\n    def __init__(self):\n        self.files = 3\n        self.lines = [1]\nvars(S())',
    # item 6
    "tool argument from mixed dicts": 'files = [{"path": "README.md", "n": 1}, {"path": "setup.py", "n": 2}]\n'
                                      '[(f["n"], len(view(path=f["path"]))) for f in files]',
    "view_range from mixed dicts": 'ts = [{"path": "README.md", "a": 1, "b": 2}]\n'
                                   '[view(path=t["path"], view_range=[t["a"], t["b"]]) for t in ts]',
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_programs_run_and_answer_as_cpython(project, env, name):
    same_as_cpython(project, env, VALID[name])


# name: (program, text the hint holds, the rewrite the hint leads to)
HINTED = {
    "operator": ('import operator\nsorted([(1, "b"), (0, "a")], key=operator.itemgetter(1))', "lambda t: t[1]",
                 'sorted([(1, "b"), (0, "a")], key=lambda t: t[1])'),
    "OrderedDict": ('from collections import OrderedDict\nOrderedDict(a=1)', "plain dict", 'dict(a=1)'),
    "sys.exit": ('import sys\nsys.exit(0)', "RuntimeError('why')", 'raise RuntimeError("why")'),
    "dict attribute": ('d = {"path": "a"}\nd.name', "d['name'] or d.get('name')", 'd = {"path": "a"}\nd.get("name")'),
    "tool result attribute": ('[h.file for h in grep(pattern="^import json", path="src")]', "'path', 'line', 'text'",
                              '[h["path"] for h in grep(pattern="^import json", path="src")]'),
    "partial(view)": ('from functools import partial\nread = partial(view)\nlen(read(path="README.md"))',
                      "can only be called, not held as a value",
                      'def read(p):\n    return view(path=p)\nlen(read("README.md"))'),
    "glob module without import": ('sorted(glob.glob("src/requests/a*.py"))', "write `import glob` first",
                                   'import glob\nsorted(glob.glob("src/requests/a*.py"))'),
}


@pytest.mark.parametrize("name", list(HINTED))
def test_hints_tell_the_truth_and_their_rewrite_is_accepted(project, env, name):
    code, hint, fixed = HINTED[name]
    rc, shown = codeact(project, env, code)
    assert rc == 1 and shown["error"], shown
    assert hint in (shown["error"]["hint"] or ""), shown["error"]
    assert "built-in method as a value" not in (shown["error"]["hint"] or "")
    if fixed.startswith("raise"):
        rc, shown = codeact(project, env, fixed)
        assert rc == 1 and shown["error"]["message"] == "why"  # the suggested way to fail, failing as asked
        return
    same_as_cpython(project, env, fixed)


def test_a_refused_glob_call_is_answered_by_a_call_that_runs(project, env):
    rc, shown = codeact(project, env, 'len(glob("src/**/*.py", recursive=True))')
    assert rc == 1 and 'write glob(pattern="src/**/*.py")' in shown["error"]["hint"], shown["error"]
    assert "recursive" not in shown["error"]["hint"].split(":")[1].split(")")[0]
    same_as_cpython(project, env, 'import glob\nlen(glob.glob("src/**/*.py", recursive=True))')
    rc, fixed = codeact(project, env, 'len(glob(pattern="src/**/*.py"))')
    assert rc == 0 and fixed["result"] > 10


def test_a_runaway_loop_is_told_it_loops(project, env):
    rc, shown = codeact(project, env, 'n = 0\nwhile n >= 0:\n    n += 1\n', "--timeout", "1")
    assert rc == 1 and shown["error"]["type"] == "TimeoutError"
    assert "while loop on line 2" in shown["error"]["hint"]


# ------------------------------------------------------------------------------------ rule 5: the held-out corpus
@pytest.mark.parametrize("name", QUICK)
def test_quick_held_out_programs_are_identical_to_cpython_through_the_launcher(project, env, name):
    same_as_cpython(project, env, PROGRAMS[name])


def test_the_held_out_corpus_is_large_and_has_a_quick_subset():
    assert len(PROGRAMS) >= 60 and 10 <= len(QUICK) < len(PROGRAMS)


def test_a_link_leading_out_of_the_workspace_is_refused_to_the_programs_own_reads(run_program, fixture_workspace,
                                                                                   tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (fixture_workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (fixture_workspace / "leakdir").symlink_to(outside, target_is_directory=True)
    for code in ('open("leak.txt").read()', 'from pathlib import Path\nPath("leak.txt").read_text()',
                 'import os\nos.listdir("leakdir")'):
        result = run_program(code)
        assert not result.ok and result.error.type == "PermissionError", (code, result)
        assert "SECRET" not in result.stdout + str(result.result) + result.error.message
    # os.walk and Path.glob swallow errors as CPython's do: the run says what it did not read
    for code in ('from pathlib import Path\nlist(Path("leakdir").rglob("*"))', 'import os\nlist(os.walk("/"))'):
        result = run_program(code)
        assert result.ok and result.result == [] and "SECRET" not in json.dumps(result.result)
        assert any(n.startswith("files: ") and "outside the workspace" in n for n in result.notes), result.notes
    walked = run_program('import os\n[(r, sorted(d), sorted(f)) for r, d, f in os.walk(".") if "leak" in str(f + d)]')
    assert walked.ok and "SECRET" not in json.dumps(walked.result)  # the link is listed, never entered


def test_the_judge_tells_identical_from_loud_from_silent_wrong():
    expected = ([1, 2], "a\n", "")
    same = {"ok": True, "result": [1, 2], "stdout": "a\n", "stderr": "", "notes": [], "error": None, "cut": None}
    assert judge("p", expected, 0, same).identical
    wrong = {**same, "result": [1]}
    assert judge("p", expected, 0, wrong).silent_wrong
    assert not judge("p", expected, 0, {**wrong, "notes": ["grep: returned 1 of 2"]}).silent_wrong
    assert not judge("p", expected, 1, {**wrong, "ok": False, "error": {"type": "E"}}).silent_wrong
    assert not judge("p", expected, 0, {**same, "cut": {"run": "x"}}).identical  # a cut answer is not whole
