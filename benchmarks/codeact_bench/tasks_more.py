"""Issue 18's tasks: an edit across files, a two-hop MCP chain, find-then-inspect over 500 files, and one task the
stamped instructions say NOT to use CodeAct for (a single edit). Baselines first, as written before any CodeAct
figure for these tasks existed; then each task's CodeAct program."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .replay import Agent, Ctx, bash_output, mcp_value, parallel, parse_glob, parse_grep, tc
from .task import Task, TaskCheckError, expect_edits, git_out, mcp_direct, py_files, sh


def _edited(results: list[Any]) -> list[bool]:
    """Which of the CLI's ``edit`` results report success."""
    return ["updated with changes" in r.content for r in results]


# --- 7. rename a function and its call sites ------------------------------------------------------------------
OLD, NEW = "to_cents", "amount_to_cents"
WORD = re.compile(r"\bto_cents\b")
RENAME_PROMPT = ("Rename the function to_cents (defined in src/acme/billing/money.py) to amount_to_cents, with every "
                 "import and call site under src/ and tests/; leave to_cents_legacy alone. Say which files changed "
                 "and how many occurrences were renamed.")


def truth_rename(repo: Path) -> Any:
    files, n = [], 0
    for rel in py_files(repo, "src", "tests"):
        k = len(WORD.findall((repo / rel).read_text("utf-8")))
        if k:
            files.append(rel)
            n += k
    return {"files": files, "replacements": n}


def render_rename(a: Any) -> str:
    return (f"Renamed {OLD} to {NEW}: {a['replacements']} occurrences in {len(a['files'])} files:\n"
            + "\n".join(f"- {f}" for f in a["files"]))


def check_rename(repo: Path, truth: Any) -> None:
    expect_edits(repo, {rel: WORD.sub(NEW, git_out(repo, "show", f"HEAD:{rel}")) for rel in truth["files"]})


def _unique_old(text_: str, lineno: int) -> str:
    """The smallest ``old_str`` around line ``lineno`` (1-based) that occurs once: the line with its newline, then
    with the line before it too — what a model copies from a file it has read."""
    lines = text_.split("\n")
    old = lines[lineno - 1] + "\n"
    if text_.count(old) != 1 and lineno > 1:
        old = lines[lineno - 2] + "\n" + old
    return old


def _retry_edits(ctx: Ctx, failed: list[tuple[str, int]]) -> Agent:
    """Edits the CLI refused (``old_str`` not unique): view those files, edit again with a unique ``old_str``."""
    paths = sorted({p for p, _ in failed})
    views = yield from parallel([tc("view", path=ctx.abs(p)) for p in paths], ctx.max_parallel)
    texts = {p: v.content for p, v in zip(paths, views)}
    retry = []
    for p, n in failed:
        old = _unique_old(texts[p], n)
        retry.append(tc("edit", path=ctx.abs(p), old_str=old, new_str=WORD.sub(NEW, old)))
    results = yield from parallel(retry, ctx.max_parallel)
    if not all(_edited(results)):
        raise TaskCheckError(f"edits failed twice: {[r.content for r in results]}")


def grep_rename(ctx: Ctx) -> Agent:
    """grep the word (content, -n), then one ``edit`` per matching line with that line as ``old_str``; where the CLI
    refuses an edit (the line is part of another line too), view the file and retry with a unique ``old_str``."""
    found = yield tc("grep", pattern=r"\bto_cents\b", paths=["src", "tests"], glob="*.py", output_mode="content",
                     **{"-n": True})
    hits = parse_grep(found[0].content)
    edits = [tc("edit", path=ctx.abs(p), old_str=t.strip(), new_str=WORD.sub(NEW, t.strip())) for p, _, t in hits]
    results = yield from parallel(edits, ctx.max_parallel)
    failed = [(p, n) for (p, n, _), ok in zip(hits, _edited(results)) if not ok]
    if failed:
        yield from _retry_edits(ctx, failed)
    return {"files": sorted({p for p, _, _ in hits}), "replacements": sum(len(WORD.findall(t)) for _, _, t in hits)}


RENAME_SHELL = ("files=$(grep -rlw --include='*.py' to_cents src tests | sort); "
                "echo \"occurrences: $(grep -ow to_cents $files | wc -l)\"; "
                "sed -i 's/\\bto_cents\\b/amount_to_cents/g' $files; printf '%s\\n' $files")


def shell_rename(_ctx: Ctx) -> Agent:
    results = yield sh(RENAME_SHELL, "Rename to_cents to amount_to_cents")
    out = [ln for ln in bash_output(results[0].content).splitlines() if ln.strip()]
    return {"files": sorted(out[1:]), "replacements": int(out[0].split(": ")[1])}


def viewall_rename(ctx: Ctx) -> Agent:
    listings = yield [tc("glob", pattern="src/**/*.py"), tc("glob", pattern="tests/**/*.py")]
    files = sorted({f for r in listings for f in parse_glob(r.content)})
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    texts = {f: v.content for f, v in zip(files, views)}
    sites = [(f, i) for f, t in texts.items() for i, ln in enumerate(t.split("\n"), 1) if WORD.search(ln)]
    edits = []
    for f, i in sites:
        old = _unique_old(texts[f], i)
        edits.append(tc("edit", path=ctx.abs(f), old_str=old, new_str=WORD.sub(NEW, old)))
    results = yield from parallel(edits, ctx.max_parallel)
    if not all(_edited(results)):
        raise TaskCheckError(f"an edit failed: {[r.content for r in results]}")
    return {"files": sorted({f for f, _ in sites}),
            "replacements": sum(len(WORD.findall(texts[f].split("\n")[i - 1])) for f, i in sites)}


# --- 8. a two-hop MCP chain -----------------------------------------------------------------------------------
HOP_USERS = ("gustavo", "noor")
HOP_PROMPT = ("Look up the profiles of gustavo and noor with the demo MCP server's profile tool, then compute the "
              "pair's review capacity with the demo server's add tool: a = gustavo's score x 2, b = noor's score x 2. "
              "Give both scores and the capacity.")


def truth_hop(_repo: Path) -> Any:
    scores = [p["score"] for p in mcp_direct([("profile", {"name": n}) for n in HOP_USERS])]
    (capacity,) = mcp_direct([("add", {"a": int(scores[0] * 2), "b": int(scores[1] * 2)})])
    return {"scores": dict(zip(HOP_USERS, scores)), "capacity": capacity}


def render_hop(a: Any) -> str:
    (x, sx), (y, sy) = a["scores"].items()
    return f"{x} scores {sx} and {y} {sy} (demo profile); their review capacity (demo add) is {a['capacity']}."


def mcp_hops(_ctx: Ctx) -> Agent:
    """Every baseline: the CLI's MCP tools (bash cannot reach them) — both profiles in one turn, then the add."""
    profiles = yield [tc("demo-profile", name=n) for n in HOP_USERS]
    scores = [mcp_value(r.content)["score"] for r in profiles]
    added = yield tc("demo-add", a=int(scores[0] * 2), b=int(scores[1] * 2))
    return {"scores": dict(zip(HOP_USERS, scores)), "capacity": mcp_value(added[0].content)}


# --- 9. find then inspect: 500 migrations, 5 matter -----------------------------------------------------------
FIND_PROMPT = ("Which migrations under migrations/ drop a column (an ALTER TABLE ... DROP COLUMN statement; a comment "
               "that mentions DROP COLUMN does not count)? For each give the file, the table and the column, its "
               "author and whether it is marked reversible.")
DROP_RE = re.compile(r"^ALTER TABLE (\w+) DROP COLUMN (\w+);")
HEAD_RE = re.compile(r"^-- (author|reversible): (\w+)")


def inspect_migration(rel: str, text_: str) -> list[list[Any]]:
    """The rows a reader takes from one migration: [file, table, column, author, reversible] per DROP COLUMN."""
    head: dict[str, str] = dict((m.group(1), m.group(2)) for ln in text_.split("\n") if (m := HEAD_RE.match(ln)))
    return [[rel, m.group(1), m.group(2), head.get("author"), head.get("reversible")]
            for ln in text_.split("\n") if (m := DROP_RE.match(ln))]


def truth_find(repo: Path) -> Any:
    rows = []
    for p in sorted((repo / "migrations").glob("*.sql")):
        rows += inspect_migration(p.relative_to(repo).as_posix(), p.read_text("utf-8"))
    return {"drops": rows}


def render_find(a: Any) -> str:
    out = [f"{len(a['drops'])} migrations drop a column:", "", "| migration | table | column | author | reversible |",
           "|---|---|---|---|---|"]
    return "\n".join(out + [f"| {f} | {t} | {c} | {w} | {r} |" for f, t, c, w, r in a["drops"]])


def grep_find(ctx: Ctx) -> Agent:
    """grep the statement (comments excluded by the pattern), then view only the files it names, in one turn."""
    found = yield tc("grep", pattern=r"^ALTER TABLE \w+ DROP COLUMN", paths=["migrations"], output_mode="content",
                     **{"-n": True})
    files = sorted({p for p, _, _ in parse_grep(found[0].content)})
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    return {"drops": [row for f, v in zip(files, views) for row in inspect_migration(f, v.content)]}


FIND_SHELL = ("for f in $(grep -lE '^ALTER TABLE [a-z_]+ DROP COLUMN' migrations/*.sql); do echo \"== $f\"; "
              "grep -E '^(-- author:|-- reversible:|ALTER TABLE [a-z_]+ DROP COLUMN)' \"$f\"; done")


def parse_blocks(out: str) -> Any:
    """``== FILE`` followed by that file's relevant lines, per file -> the rows."""
    rows: list[Any] = []
    current: str | None = None
    lines: list[str] = []
    for ln in out.splitlines() + ["== "]:
        if ln.startswith("== "):
            if current:
                rows += inspect_migration(current, "\n".join(lines))
            current, lines = ln[3:].strip(), []
        else:
            lines.append(ln)
    return {"drops": sorted(rows)}


def shell_find(_ctx: Ctx) -> Agent:
    results = yield sh(FIND_SHELL, "Find migrations that drop a column")
    return parse_blocks(bash_output(results[0].content))


def viewall_find(ctx: Ctx) -> Agent:
    listing = yield tc("glob", pattern="migrations/*.sql")
    files = parse_glob(listing[0].content)
    views = yield from parallel([tc("view", path=ctx.abs(f)) for f in files], ctx.max_parallel)
    return {"drops": [row for f, v in zip(files, views) for row in inspect_migration(f, v.content)]}


# --- 10. not for CodeAct: one edit ----------------------------------------------------------------------------
BUMP_PROMPT = "Bump the version in pyproject.toml from 0.1.0 to 0.2.0."
BUMP_OLD, BUMP_NEW = 'version = "0.1.0"', 'version = "0.2.0"'


def truth_bump(repo: Path) -> Any:
    if (repo / "pyproject.toml").read_text("utf-8").count(BUMP_OLD) != 1:
        raise TaskCheckError(f"pyproject.toml does not hold {BUMP_OLD!r} exactly once")
    return {"file": "pyproject.toml", "from": "0.1.0", "to": "0.2.0"}


def render_bump(a: Any) -> str:
    return f"Bumped the version in {a['file']} from {a['from']} to {a['to']}."


def check_bump(repo: Path, _truth: Any) -> None:
    expect_edits(repo, {"pyproject.toml": git_out(repo, "show", "HEAD:pyproject.toml").replace(BUMP_OLD, BUMP_NEW)})


def _bumped(ok: bool) -> Any:
    if not ok:
        raise TaskCheckError("the version edit failed")
    return {"file": "pyproject.toml", "from": "0.1.0", "to": "0.2.0"}


def edit_bump(ctx: Ctx) -> Agent:
    """The prompt names the file and both versions: one ``edit``."""
    results = yield tc("edit", path=ctx.abs("pyproject.toml"), old_str=BUMP_OLD, new_str=BUMP_NEW)
    return _bumped(_edited(results)[0])


def shell_bump(_ctx: Ctx) -> Agent:
    results = yield sh("sed -i 's/^version = \"0.1.0\"$/version = \"0.2.0\"/' pyproject.toml && "
                       "grep -n '^version' pyproject.toml", "Bump the version")
    return _bumped(bash_output(results[0].content).strip().endswith(BUMP_NEW))


def viewall_bump(ctx: Ctx) -> Agent:
    """Read the file first, then edit it."""
    seen = yield tc("view", path=ctx.abs("pyproject.toml"))
    if BUMP_OLD not in seen[0].content:
        raise TaskCheckError("pyproject.toml as viewed has no version 0.1.0")
    return (yield from edit_bump(ctx))


# ================================================================================== CodeAct's programs (after)
RENAME_PROGRAM = r'''
import re
word = re.compile(r"\bto_cents\b")
files = sorted({h["path"] for h in grep(pattern=r"\bto_cents\b", path="src", glob="*.py")
                + grep(pattern=r"\bto_cents\b", path="tests", glob="*.py")})
total = 0
for path in files:
    text = view(path=path)
    total += len(word.findall(text))
    edit(path=path, old_str=text, new_str=word.sub("amount_to_cents", text))
print("occurrences:", total)
print("\n".join(files))
'''


def parse_rename_output(out: str) -> Any:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return {"files": sorted(lines[1:]), "replacements": int(lines[0].split(": ")[1])}


HOP_PROGRAM = r'''
s = [demo.profile(name=n)["score"] for n in ("gustavo", "noor")]
print(s[0], s[1], demo.add(a=int(s[0] * 2), b=int(s[1] * 2)))
'''


def parse_hop_output(out: str) -> Any:
    a, b, cap = out.split()
    return {"scores": dict(zip(HOP_USERS, (float(a), float(b)))), "capacity": int(cap)}


FIND_PROGRAM = r'''
import re
for path in sorted({h["path"] for h in grep(pattern=r"^ALTER TABLE \w+ DROP COLUMN", path="migrations")}):
    print("== " + path)
    for line in view(path=path).split("\n"):
        if re.match(r"^(-- author:|-- reversible:|ALTER TABLE \w+ DROP COLUMN)", line):
            print(line)
'''

BUMP_PROGRAM = r'''
print(edit(path="pyproject.toml", old_str='version = "0.1.0"', new_str='version = "0.2.0"'))
'''


def parse_bump_output(out: str) -> Any:
    return _bumped(out.strip() == "edited pyproject.toml")


def _live_rename(final: str, truth: Any) -> bool:
    return str(truth["replacements"]) in final


def _live_hop(final: str, truth: Any) -> bool:
    return str(truth["capacity"]) in final


def _live_find(final: str, truth: Any) -> bool:
    return all(f.rsplit("/", 1)[-1][:4] in final for f, *_ in truth["drops"])


def _live_bump(final: str, _truth: Any) -> bool:
    return "0.2.0" in final


def _same(agent: Any) -> dict[str, Any]:
    return {"baseline-grep": agent, "baseline-shell": agent, "view-all": agent}


MORE_TASKS: list[Task] = [
    Task("rename_across_files", "rename a function and its call sites", RENAME_PROMPT, True, truth_rename,
         render_rename, {"baseline-grep": grep_rename, "baseline-shell": shell_rename, "view-all": viewall_rename},
         RENAME_PROGRAM, parse_rename_output, check=check_rename, live_check=_live_rename),
    Task("mcp_two_hop", "two-hop MCP chain (the add needs the profiles)", HOP_PROMPT, True, truth_hop, render_hop,
         _same(mcp_hops), HOP_PROGRAM, parse_hop_output, needs=("demo.profile", "demo.add"), live_check=_live_hop),
    Task("find_then_inspect", "find then inspect: 500 migrations, 5 matter", FIND_PROMPT, True, truth_find,
         render_find, {"baseline-grep": grep_find, "baseline-shell": shell_find, "view-all": viewall_find},
         FIND_PROGRAM, parse_blocks, live_check=_live_find),
    Task("not_for_codeact", "one edit (the instructions say: not CodeAct)", BUMP_PROMPT, False, truth_bump,
         render_bump, {"baseline-grep": edit_bump, "baseline-shell": shell_bump, "view-all": viewall_bump},
         BUMP_PROGRAM, parse_bump_output, check=check_bump, live_check=_live_bump),
]
