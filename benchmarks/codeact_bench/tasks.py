"""The original six tasks: each one's prompt, ground truth (from the files), baselines, CodeAct program and answer.

The baselines (``baseline-grep``, ``baseline-shell``, ``view-all``; see ``task.BASELINE_DOC``) were written as what a
capable agent does with the CLI's own tools; issue 18's four tasks are in ``tasks_more.py``; ``TASKS`` holds all."""
from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .replay import (
    Agent,
    Ctx,
    bash_output,
    count_summary_folders,
    mcp_value,
    parallel,
    parse_count,
    parse_glob,
    parse_grep,
    tc,
)
from .task import DEMO_SERVER, REPO_ROOT, Task, mcp_direct, py_files, sh
from .tasks_more import MORE_TASKS

__all__ = ["DEMO_SERVER", "REPO_ROOT", "TASKS", "TASKS_BY_NAME", "TODO_PROGRAM", "Task"]


# ================================================================================================== the tasks
TODO_RE = r"#.*\bTODO\b"
OS_RE = r"^\s*(import\s+([\w.]+\s*,\s*)*os\b|from\s+os\b)"
OS_ERE = r"^\s*(import\s+([[:alnum:]_.]+\s*,\s*)*os\b|from\s+os\b)"  # grep -E: no \w inside [...]
DEF_RE = re.compile(r"\s*(async\s+)?def\s")
CLASS_RE = re.compile(r"\s*class\s")


_py_files = py_files


def view_all(ctx: Ctx, *patterns: str) -> Agent:
    """The worst case: glob each pattern (one turn), then view every file found, 16 a turn; -> {path: text}."""
    listings = yield [tc("glob", pattern=p) for p in patterns]
    files = sorted({f for r in listings for f in parse_glob(r.content)})
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    return {f: v.content for f, v in zip(files, views)}


# --- 1. every TODO ------------------------------------------------------------------------------------------------
def truth_todo(repo: Path) -> Any:
    todos = []
    for rel in _py_files(repo, "src", "tests"):
        src = (repo / rel).read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT and re.search(r"\bTODO\b", tok.string):
                todos.append([rel, tok.start[0]])
    return {"todos": sorted(todos), "total": len(todos)}


def render_todo(a: Any) -> str:
    by_file: dict[str, list[int]] = {}
    for path, line in a["todos"]:
        by_file.setdefault(path, []).append(line)
    rows = [f"- {p}: {', '.join(map(str, ls))}" for p, ls in sorted(by_file.items())]
    return f"{a['total']} TODO comments in {len(by_file)} files (file: lines):\n" + "\n".join(rows) + \
        f"\n\nTotal: {a['total']}"


def grep_todo(_ctx: Ctx) -> Agent:
    results = yield tc("grep", pattern=TODO_RE, paths=["src", "tests"], glob="*.py", output_mode="content",
                       **{"-n": True})
    hits = parse_grep(results[0].content)
    return {"todos": [[p, n] for p, n, _ in hits], "total": len(hits)}


def parse_path_lines(out: str) -> list[tuple[str, int]]:
    """``path:LINE`` lines (``grep -rn ... | cut -d: -f1,2``) as sorted (path, line)."""
    hits = []
    for line in out.splitlines():
        if line.strip():
            path, _, n = line.rpartition(":")
            hits.append((path, int(n)))
    return sorted(hits)


def shell_todo(_ctx: Ctx) -> Agent:
    """Only ``path:line`` comes back (``cut``): the answer asks for no more."""
    results = yield sh(r"grep -rnE '#.*\bTODO\b' --include='*.py' src tests | cut -d: -f1,2", "Find TODO comments")
    hits = parse_path_lines(bash_output(results[0].content))
    return {"todos": [[p, n] for p, n in hits], "total": len(hits)}


def viewall_todo(ctx: Ctx) -> Agent:
    texts = yield from view_all(ctx, "src/**/*.py", "tests/**/*.py")
    todos = [[f, i] for f, t in texts.items() for i, ln in enumerate(t.split("\n"), 1) if re.search(TODO_RE, ln)]
    return {"todos": sorted(todos), "total": len(todos)}


TODO_PROGRAM = r'''
hits = grep(pattern=r"#.*\bTODO\b", path="src", glob="*.py") + grep(pattern=r"#.*\bTODO\b", path="tests", glob="*.py")
lines = {}
for h in hits:
    lines.setdefault(h["path"], []).append(h["line"])
for path in sorted(lines):
    print(path + ": " + ",".join(str(n) for n in lines[path]))
print("total:", len(hits))
'''


def parse_todo_output(out: str) -> Any:
    todos, total = [], None
    for line in out.splitlines():
        if line.startswith("total:"):
            total = int(line.split(":")[1])
        elif line.strip():
            path, _, nums = line.rpartition(": ")
            todos += [[path, int(n)] for n in nums.split(",")]
    return {"todos": sorted(todos), "total": total}


# --- 2. per-file counts -----------------------------------------------------------------------------------------
def _stats_row(rel: str, src: str) -> list[Any]:
    lines = src.split("\n")[:-1] if src.endswith("\n") else src.split("\n")
    return [rel, sum(1 for ln in lines if DEF_RE.match(ln)), sum(1 for ln in lines if CLASS_RE.match(ln)),
            src.count("\n")]


def truth_stats(repo: Path) -> Any:
    rows = []
    for rel in _py_files(repo, "src"):
        src = (repo / rel).read_text(encoding="utf-8")
        tree = ast.parse(src)
        funcs = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))
        classes = sum(isinstance(n, ast.ClassDef) for n in ast.walk(tree))
        row = [rel, funcs, classes, src.count("\n")]
        assert _stats_row(rel, src) == row, f"the line patterns disagree with ast in {rel}"
        rows.append(row)
    return {"rows": rows}


def render_stats(a: Any) -> str:
    rows = a["rows"]
    out = ["| file | functions | classes | lines |", "|---|---:|---:|---:|"]
    out += [f"| {p} | {f} | {c} | {n} |" for p, f, c, n in rows]
    out.append(f"| **{len(rows)} files** | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} | "
               f"{sum(r[3] for r in rows)} |")
    return "\n".join(out)


COUNT_PATTERNS = (r"^\s*(async\s+)?def\s", r"^\s*class\s", "^")  # defs, classes, every line
COUNT_GROUP_FILES = 30  # files per count call: 1.0.102 lists ~30 per file, summarises 198 (top files, folders)


def grep_stats(ctx: Ctx) -> Agent:
    """Three count-mode greps in one turn (a file without a def or class is absent from that count). Over many
    files the CLI answers with a summary (top files, totals per folder); the agent then counts again per group of
    folders (at most ``COUNT_GROUP_FILES`` files a call, the folders and sizes taken from that summary)."""
    first = yield [tc("grep", pattern=p, paths=["src"], glob="*.py", output_mode="count") for p in COUNT_PATTERNS]
    folders = count_summary_folders(first[2].content)
    if folders is None and count_summary_folders(first[0].content) is None:
        d, c, n = (parse_count(r.content) for r in first)
        return {"rows": [[f, d.get(f, 0), c.get(f, 0), n[f]] for f in sorted(n)]}
    if folders is None:
        folders = {"src": len(parse_count(first[2].content))}
    groups: list[list[str]] = [[]]
    size = 0
    for folder, files in sorted(folders.items()):
        if groups[-1] and size + files > COUNT_GROUP_FILES:
            groups.append([])
            size = 0
        groups[-1].append(folder)
        size += files
    calls = [tc("grep", pattern=p, paths=g, glob="*.py", output_mode="count") for g in groups for p in COUNT_PATTERNS]
    results = yield from parallel(calls, ctx.max_parallel)
    d, c, n = {}, {}, {}
    for i, r in enumerate(results):
        (d, c, n)[i % 3].update(parse_count(r.content))
    return {"rows": [[f, d.get(f, 0), c.get(f, 0), n[f]] for f in sorted(n)]}


STATS_SHELL = r"""python3 -c 'import ast, pathlib
for p in sorted(pathlib.Path("src").rglob("*.py")):
    s = p.read_text(); t = list(ast.walk(ast.parse(s)))
    print(p, sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in t),
          sum(isinstance(n, ast.ClassDef) for n in t), s.count(chr(10)), sep=chr(9))'"""


def shell_stats(_ctx: Ctx) -> Agent:
    results = yield sh(STATS_SHELL, "Count functions, classes and lines per file")
    return parse_stats_output("header\n" + bash_output(results[0].content))


def viewall_stats(ctx: Ctx) -> Agent:
    texts = yield from view_all(ctx, "src/**/*.py")
    return {"rows": [_stats_row(f, t) for f, t in texts.items()]}


STATS_PROGRAM = r'''
import re
print("path\tfunctions\tclasses\tlines")
for path in glob(pattern="*.py", path="src"):
    text = view(path=path)
    rows = text.split("\n")[:-1]
    defs = len([r for r in rows if re.match(r"\s*(async\s+)?def\s", r)])
    classes = len([r for r in rows if re.match(r"\s*class\s", r)])
    print(f"{path}\t{defs}\t{classes}\t{len(rows)}")
'''


def parse_stats_output(out: str) -> Any:
    rows = []
    for line in out.splitlines()[1:]:
        if line.strip():
            p, f, c, n = line.split("\t")
            rows.append([p, int(f), int(c), int(n)])
    return {"rows": sorted(rows)}


# --- 3. files importing os ------------------------------------------------------------------------------------
def truth_os(repo: Path) -> Any:
    files = []
    for rel in _py_files(repo, "src", "tests"):
        lines = set()
        for node in ast.walk(ast.parse((repo / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(a.name == "os" or a.name.startswith("os.") for a in node.names):
                lines.add(node.lineno)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                    (node.module == "os" or node.module.startswith("os.")):
                lines.add(node.lineno)
        if lines:
            files.append([rel, sorted(lines)])
    return {"files": files}


def render_os(a: Any) -> str:
    rows = [f"- {p}: line {', '.join(map(str, ls))}" for p, ls in a["files"]]
    return f"{len(a['files'])} files import os:\n" + "\n".join(rows)


def _group(hits: Iterable[tuple[str, int]]) -> list[list[Any]]:
    by: dict[str, list[int]] = {}
    for p, n in hits:
        by.setdefault(p, []).append(n)
    return [[p, sorted(ls)] for p, ls in sorted(by.items())]


def grep_os(_ctx: Ctx) -> Agent:
    results = yield tc("grep", pattern=OS_RE, paths=["src", "tests"], glob="*.py", output_mode="content",
                       **{"-n": True})
    return {"files": _group((p, n) for p, n, _ in parse_grep(results[0].content))}


def shell_os(_ctx: Ctx) -> Agent:
    results = yield sh(f"grep -rnE '{OS_ERE}' --include='*.py' src tests | cut -d: -f1,2", "Find imports of os")
    return {"files": _group(parse_path_lines(bash_output(results[0].content)))}


def viewall_os(ctx: Ctx) -> Agent:
    texts = yield from view_all(ctx, "src/**/*.py", "tests/**/*.py")
    return {"files": _group((f, i) for f, t in texts.items() for i, ln in enumerate(t.split("\n"), 1)
                            if re.match(OS_RE, ln))}


OS_PROGRAM = r'''
OS = r"^\s*(import\s+([\w.]+\s*,\s*)*os\b|from\s+os\b)"
hits = grep(pattern=OS, path="src", glob="*.py") + grep(pattern=OS, path="tests", glob="*.py")
lines = {}
for h in hits:
    lines.setdefault(h["path"], []).append(str(h["line"]))
for path in sorted(lines):
    print(path + ": " + ",".join(lines[path]))
print(len(lines), "files")
'''


def parse_os_output(out: str) -> Any:
    hits = []
    for line in out.splitlines():
        if ": " in line:
            path, _, nums = line.rpartition(": ")
            hits += [(path, int(n)) for n in nums.split(",")]
    return {"files": _group(hits)}


# --- 4. validate every JSON config -----------------------------------------------------------------------------
def _valid_json(s: str) -> bool:
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


def truth_json(repo: Path) -> Any:
    files = sorted(p.relative_to(repo).as_posix() for p in (repo / "config").rglob("*.json"))
    return {"total": len(files), "invalid": [f for f in files if not _valid_json((repo / f).read_text("utf-8"))]}


def render_json(a: Any) -> str:
    bad = a["invalid"]
    return (f"{a['total'] - len(bad)} of {a['total']} configs are valid JSON; {len(bad)} are not:\n"
            + "\n".join(f"- {p}" for p in bad))


def viewall_json(ctx: Ctx) -> Agent:
    """grep cannot validate JSON: the search-first agent, too, reads every config (so ``baseline-grep`` is this)."""
    texts = yield from view_all(ctx, "config/**/*.json")
    # the model reads each file and judges it; json.loads stands in for that judgement
    return {"total": len(texts), "invalid": [f for f, t in texts.items() if not _valid_json(t)]}


JSON_SHELL = ("if command -v jq >/dev/null; then chk='jq empty'; else chk='python3 -m json.tool'; fi; n=0; "
              "for f in config/*.json; do n=$((n+1)); $chk \"$f\" >/dev/null 2>&1 || echo \"invalid: $f\"; done; "
              "echo \"total: $n\"")


def shell_json(_ctx: Ctx) -> Agent:
    results = yield sh(JSON_SHELL, "Validate every JSON config")
    out = bash_output(results[0].content).splitlines()
    return {"total": int(out[-1].split(": ")[1]),
            "invalid": sorted(ln.split(": ", 1)[1] for ln in out if ln.startswith("invalid: "))}


JSON_PROGRAM = r'''
import json
files = glob(pattern="*.json", path="config")
bad = []
for path in files:
    try:
        json.loads(view(path=path))
    except ValueError as err:
        bad.append(f"{path}: {err}")
print(f"{len(files) - len(bad)} of {len(files)} valid")
print("\n".join(bad))
'''


def parse_json_output(out: str) -> Any:
    lines = out.splitlines()
    total = int(lines[0].split(" of ")[1].split()[0])
    return {"total": total, "invalid": sorted(line.split(": ", 1)[0] for line in lines[1:] if line.strip())}


# --- 5. two MCP tools chained with built-in tools ------------------------------------------------------------------
MCP_PROMPT = ("Each package under src/acme/ has an OWNERS file naming its primary owner, then its secondary owner. "
              "Look up both owners with the demo MCP server's profile tool. A package's review capacity is the demo "
              "server's add tool applied to a = the primary owner's score x 2 and b = the secondary owner's score "
              "x 2 (scores are halves, so these are whole numbers). List every package with its capacity and owners, "
              "highest capacity first (ties by package name).")


def _owners(text_: str) -> list[str]:
    return [ln.strip() for ln in text_.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


_mcp_direct = mcp_direct


def _capacity_rows(owners: dict[str, list[str]], caps: dict[str, int]) -> list[list[Any]]:
    rows = [[pkg, caps[pkg], names[0], names[1]] for pkg, names in owners.items()]
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def truth_mcp(repo: Path) -> Any:
    owners = {p.parent.name: _owners(p.read_text("utf-8")) for p in sorted((repo / "src" / "acme").glob("*/OWNERS"))}
    names = sorted({n for ns in owners.values() for n in ns})
    scores = dict(zip(names, (p["score"] for p in _mcp_direct([("profile", {"name": n}) for n in names]))))
    pkgs = sorted(owners)
    adds = _mcp_direct([("add", {"a": int(scores[owners[p][0]] * 2), "b": int(scores[owners[p][1]] * 2)})
                        for p in pkgs])
    return {"packages": _capacity_rows(owners, dict(zip(pkgs, adds)))}


def render_mcp(a: Any) -> str:
    out = ["| package | review capacity | primary | secondary |", "|---|---:|---|---|"]
    out += [f"| {p} | {c} | {x} | {y} |" for p, c, x, y in a["packages"]]
    return "\n".join(out)


def _mcp_capacities(ctx: Ctx, owners: dict[str, list[str]]) -> Agent:
    """The MCP part every baseline shares (bash cannot reach the CLI's MCP servers): the profiles, then the adds."""
    names = sorted({n for ns in owners.values() for n in ns})
    profiles = yield from parallel([tc("demo-profile", name=n) for n in names], ctx.max_parallel)
    scores = {n: mcp_value(r.content)["score"] for n, r in zip(names, profiles)}
    pkgs = sorted(owners)
    sums = yield from parallel([tc("demo-add", a=int(scores[owners[p][0]] * 2), b=int(scores[owners[p][1]] * 2))
                                for p in pkgs], ctx.max_parallel)
    return {"packages": _capacity_rows(owners, {p: mcp_value(r.content) for p, r in zip(pkgs, sums)})}


def grep_mcp(ctx: Ctx) -> Agent:
    found = yield tc("grep", pattern=r"^[^#]", paths=["src"], glob="OWNERS", output_mode="content", **{"-n": True})
    owners: dict[str, list[str]] = {}
    for path, _line, name in parse_grep(found[0].content):  # sorted by path, then line: primary first
        owners.setdefault(path.split("/")[-2], []).append(name.strip())
    return (yield from _mcp_capacities(ctx, owners))


def shell_mcp(ctx: Ctx) -> Agent:
    found = yield sh("grep -Hv '^#' src/acme/*/OWNERS", "List the owners")
    owners: dict[str, list[str]] = {}
    for line in bash_output(found[0].content).splitlines():  # in file order: primary first
        if line.strip():
            path, _, name = line.partition(":")
            owners.setdefault(path.split("/")[-2], []).append(name.strip())
    return (yield from _mcp_capacities(ctx, owners))


def viewall_mcp(ctx: Ctx) -> Agent:
    texts = yield from view_all(ctx, "src/**/OWNERS")
    return (yield from _mcp_capacities(ctx, {f.split("/")[-2]: _owners(t) for f, t in texts.items()}))


MCP_PROGRAM = r'''
owners = {}
for path in glob(pattern="OWNERS", path="src"):
    owners[path.split("/")[-2]] = [n.strip() for n in view(path=path).splitlines() if n.strip() and not n.startswith("#")]
scores = {}
for name in sorted({n for names in owners.values() for n in names}):
    scores[name] = demo.profile(name=name)["score"]
rows = []
for pkg, names in owners.items():
    rows.append((demo.add(a=int(scores[names[0]] * 2), b=int(scores[names[1]] * 2)), pkg, names[0], names[1]))
for cap, pkg, first, second in sorted(rows, key=lambda r: (-r[0], r[1])):
    print(f"{pkg}\t{cap}\t{first}\t{second}")
'''


def parse_mcp_output(out: str) -> Any:
    rows = []
    for line in out.splitlines():
        if line.strip():
            p, c, x, y = line.split("\t")
            rows.append([p, int(c), x, y])
    return {"packages": rows}


# --- 6. one file: what does README.md say ----------------------------------------------------------------------
def summarize_readme(md: str) -> Any:
    lines = md.split("\n")
    title = next(ln[2:].strip() for ln in lines if ln.startswith("# "))
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# ")) + 1
    para: list[str] = []
    for ln in lines[start:]:
        if not ln.strip():
            if para:
                break
            continue
        para.append(ln.strip())
    sections = [ln[3:].strip() for ln in lines if ln.startswith("## ")]
    services = 0
    current = None
    for ln in lines:
        if ln.startswith("## "):
            current = ln[3:].strip()
        elif current == "Services" and ln.startswith("- **"):
            services += 1
    return {"title": title, "intro": " ".join(para), "sections": sections, "services": services}


def truth_readme(repo: Path) -> Any:
    return summarize_readme((repo / "README.md").read_text("utf-8"))


def render_readme(a: Any) -> str:
    return (f"README.md introduces **{a['title']}**: {a['intro']}\n\nIt has {len(a['sections'])} sections "
            f"({', '.join(a['sections'])}) and lists {a['services']} services.")


def view_readme(ctx: Ctx) -> Agent:
    results = yield tc("view", path=ctx.abs("README.md"))
    return summarize_readme(results[0].content)


def shell_readme(_ctx: Ctx) -> Agent:
    results = yield sh("cat README.md", "Show README.md")
    return summarize_readme(bash_output(results[0].content))


README_PROGRAM = 'print(view(path="README.md"))'


def parse_readme_output(out: str) -> Any:
    return summarize_readme(out)


def _live_todo(final: str, truth: Any) -> bool:
    return str(truth["total"]) in final


def _live_os(final: str, truth: Any) -> bool:
    return all(p.rsplit("/", 1)[-1] in final for p, _ in truth["files"])


def _live_json(final: str, truth: Any) -> bool:
    return all(p.rsplit("/", 1)[-1] in final for p in truth["invalid"])


def _live_mcp(final: str, truth: Any) -> bool:
    return all(p in final for p, *_ in truth["packages"]) and str(truth["packages"][0][1]) in final


def _live_readme(final: str, truth: Any) -> bool:
    return truth["title"] in final


def _b(grep: Any, shell: Any, view: Any) -> dict[str, Any]:
    return {"baseline-grep": grep, "baseline-shell": shell, "view-all": view}


TASKS: list[Task] = [
    Task("todo", "every TODO, with file, line and total",
         "List every TODO comment in the Python files under src/ and tests/, with its file and line number, and give "
         "the total.", True, truth_todo, render_todo, _b(grep_todo, shell_todo, viewall_todo), TODO_PROGRAM,
         parse_todo_output, live_check=_live_todo),
    Task("stats", "per-file functions, classes, lines (table)",
         "For every Python file under src/, count its functions (def and async def, methods and nested functions "
         "included), its classes and its lines. Answer with a table.", True, truth_stats, render_stats,
         _b(grep_stats, shell_stats, viewall_stats), STATS_PROGRAM, parse_stats_output),
    Task("os_imports", "files importing os, with line numbers",
         "Which Python files under src/ and tests/ import the os module (import os, import os.path, from os import "
         "..., including imports inside functions)? Give each file with the line numbers of those imports.", True,
         truth_os, render_os, _b(grep_os, shell_os, viewall_os), OS_PROGRAM, parse_os_output, live_check=_live_os),
    Task("json", "validate every JSON config",
         "Validate every JSON config under config/: which files are not valid JSON, and how many are valid?", True,
         truth_json, render_json, _b(viewall_json, shell_json, viewall_json), JSON_PROGRAM, parse_json_output,
         live_check=_live_json),
    Task("mcp_chain", "two MCP tools chained with built-in tools", MCP_PROMPT, True, truth_mcp, render_mcp,
         _b(grep_mcp, shell_mcp, viewall_mcp), MCP_PROGRAM, parse_mcp_output, needs=("demo.profile", "demo.add"),
         live_check=_live_mcp),
    Task("readme", "one file: what does README.md say", "What does README.md say?", False, truth_readme,
         render_readme, _b(view_readme, shell_readme, view_readme), README_PROGRAM, parse_readme_output,
         live_check=_live_readme),
    *MORE_TASKS,
]
TASKS_BY_NAME = {t.name: t for t in TASKS}
