"""Real repositories stamped as a user stamps them, real tasks through the launcher, each answer checked against an
independent tool (git, universal-ctags, the file itself).

Each repository (a git directory or clone, e.g. what the ``fetch`` tool gives) is cloned to a scratch folder, its
main language found from ``git ls-files``, stamped with ``copier copy --trust --defaults`` from this template and
committed (``git add -A``). Then, through ``.codeact/bin/codeact run``, as a model would from the stamped texts:

- files of the main language (``glob``) against ``git ls-files`` (the files the stamp added left out);
- the repository's TODO lines (``grep``, the stamped texts included) against ``git grep`` before the stamp (the
  stamp adds none);
- the types, functions and methods of the busiest folder (``outline``) against ``ctags`` on the same files
  (name and line), the cached outline against the uncached one, and the whole repository outlined;
- the callers of a function outline found (``grep``) against ``git grep``;
- the body of the longest function (``view`` with outline's lines) against the file's own lines.

    CODEACT_REAL_REPOS=/work/.mirror/spf13+cobra/repo:... python benchmarks/bench_real_repos.py [--out PATH]

Without repositories it says so and exits 0 (nothing to measure).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from tests.conftest import VENV_CACHE  # noqa: E402
from userpath import LAUNCHER, launcher_env, machine_load, template_snapshot  # noqa: E402

ENDINGS = {".go": "Go", ".rs": "Rust", ".ts": "TypeScript", ".java": "Java", ".cs": "C#", ".py": "Python",
           ".js": "JavaScript", ".kt": "Kotlin", ".rb": "Ruby", ".php": "PHP", ".c": "C", ".cpp": "C++"}
CTAGS = {"Go": "Go", "Rust": "Rust", "TypeScript": "TypeScript", "Java": "Java", "C#": "C#", "Python": "Python",
         "JavaScript": "JavaScript", "Kotlin": "Kotlin", "Ruby": "Ruby", "PHP": "PHP", "C": "C", "C++": "C++"}
CALLABLE = {"function", "method"}
CTAGS_CALLABLE = {"Go": {"func", "methodSpec"}, "Python": {"function", "member"},  # Python's member: a method; Go's: a field
                  "Java": {"method"}, "C#": {"method"}, "Ruby": {"method", "singletonMethod"}}
OUTPUT = 7 * 2**20  # printed bytes a run shows: whole answers to check (a model pages with previous_output)


def sh(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-800:]}")
    return done.stdout


class Repo:
    """A stamped clone and its launcher."""

    def __init__(self, source: Path, scratch: Path, template: Path) -> None:
        self.name = source.parent.name.replace("+", "/") if source.name == "repo" else source.name
        self.root = scratch / self.name.replace("/", "+")
        self.stamped: set[str] = set()  # the files the stamp added or changed
        sh(["git", "clone", "-q", "--no-checkout", str(source), str(self.root)], scratch)
        self.before = sh(["git", "rev-parse", "HEAD"], self.root).strip()
        self.absent = absent_blobs(self.root)
        if self.absent:  # a mirror may lack its largest files: check out the rest
            sh(["git", "sparse-checkout", "set", "--no-cone", "/*", *(f"!/{p}" for p in self.absent)], self.root)
        sh(["git", "checkout", "-q"], self.root)
        self.todos = self.git_grep(r"\bTODO\b")  # before the stamp
        listed = self.tracked()
        counts = collections.Counter(os.path.splitext(p)[1] for p in listed if os.path.splitext(p)[1] in ENDINGS)
        self.ending = counts.most_common(1)[0][0]
        self.language = ENDINGS[self.ending]
        self.files = len(listed)
        home = scratch / "home" / self.root.name
        home.mkdir(parents=True)
        self.env = launcher_env(home, VENV_CACHE)
        started = time.perf_counter()
        sh([sys.executable, "-m", "copier", "copy", "--trust", "--defaults", "--quiet", str(template), "."],
           self.root, env={**self.env, "PATH": os.environ["PATH"]}, timeout=900)
        self.stamp_s = time.perf_counter() - started
        sh(["git", "add", "-A"], self.root)
        sh(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m",
            "codeact"], self.root)
        self.launcher_committed = bool(sh(["git", "ls-files", str(LAUNCHER)], self.root).strip())
        self.stamped = set(sh(["git", "diff", "--name-only", self.before, "HEAD"], self.root).splitlines())

    def run(self, code: str, timeout: int = 120) -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        done = subprocess.run([str(self.root / LAUNCHER), "run", "--json", "--timeout", str(timeout), "--code", code],
                              cwd=self.root, env={**self.env, "CODEACT_OUTPUT": str(OUTPUT)}, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=timeout + 120)
        took = time.perf_counter() - started
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            raise SystemExit(f"{self.name}: codeact run printed no JSON ({done.returncode}): {done.stdout[-500:]} "
                             f"{done.stderr[-800:]}") from None
        if not answer.get("ok"):
            raise SystemExit(f"{self.name}: the program failed: {answer.get('error')}\n{code}")
        return answer, took

    def printed(self, code: str, timeout: int = 120) -> tuple[Any, list[str], float]:
        """What the program printed as JSON (its one line), its notes, seconds."""
        answer, took = self.run("import json\n" + code, timeout)
        try:
            return json.loads(answer["stdout"]), answer.get("notes") or [], took
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{self.name}: {exc}: {answer['stdout'][max(0, exc.pos - 200):exc.pos + 100]!r}") from None

    def tracked(self, *pattern: str) -> list[str]:
        """Tracked files checked out (a mirror's absent blobs are not), the stamp's own left out."""
        return [p for p in sh(["git", "ls-files", *pattern], self.root).splitlines()
                if p not in self.stamped and (self.root / p).is_file()]

    def git_grep(self, pattern: str) -> list[str]:
        """``path:line`` of each matching line of the checked-out tracked files (the stamp's own left out)."""
        out = sh(["git", "grep", "-n", "-I", "-P", pattern], self.root)
        paths = [line.split(":", 1)[0] for line in out.splitlines()]
        return [":".join(line.split(":", 2)[:2]) for path, line in zip(paths, out.splitlines())
                if path not in self.stamped and (self.root / path).is_file()]


def absent_blobs(root: Path) -> list[str]:
    """The paths of HEAD whose blobs the clone lacks."""
    tree = [line.split("\t", 1) for line in sh(["git", "ls-tree", "-r", "HEAD"], root).splitlines()]
    blobs = [(meta.split()[2], path) for meta, path in tree if meta.split()[1] == "blob"]
    done = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, input="".join(f"{sha}\n" for sha, _ in blobs),
                          capture_output=True, text=True, check=True)
    return [path for (_, path), line in zip(blobs, done.stdout.splitlines()) if line.endswith(" missing")]


def check_files(repo: Repo) -> dict[str, Any]:
    found, notes, took = repo.printed(f'print(json.dumps(glob(pattern="*{repo.ending}")))')
    expected = repo.tracked(f"*{repo.ending}")
    return row("files of the main language (glob)", f"{len(found)} files", f"git ls-files: {len(expected)}",
               sorted(found) == sorted(expected), took, diff(found, expected))


def check_todos(repo: Repo) -> dict[str, Any]:
    found, notes, took = repo.printed('print(json.dumps([f"{h[\'path\']}:{h[\'line\']}" for h in '
                                      'grep(pattern=r"\\bTODO\\b", max_results=100000)]))')
    expected = repo.todos
    return row("TODO lines (grep), against git grep before the stamp", f"{len(found)} lines",
               f"git grep: {len(expected)}", sorted(found) == sorted(expected), took, diff(found, expected))


def busiest_folder(repo: Repo) -> str:
    folders = collections.Counter(os.path.dirname(p) or "." for p in repo.tracked(f"*{repo.ending}")
                                  if "test" not in p.lower())
    return folders.most_common(1)[0][0]


def ctags_items(repo: Repo, files: list[str]) -> set[tuple[str, str, int, bool]]:
    out = sh(["ctags", "--output-format=json", "--fields=+nK", f"--languages={CTAGS[repo.language]}", "-f", "-",
              *files], repo.root)
    items = set()
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") in CTAGS_CALLABLE.get(repo.language, {"function", "method"}):
            items.add((tag["path"], tag["name"], tag["line"], True))
    return items


def check_outline(repo: Repo) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, Any]]:
    folder = busiest_folder(repo)
    code = (f'items = outline(path={folder!r}, glob="*{repo.ending}")\n'
            'print(json.dumps([[i["path"], i["kind"], i["name"], i["qualname"], i["line"], i["end_line"]] '
            'for i in items]))')
    cold, _, cold_s = repo.printed(code)
    warm, notes, warm_s = repo.printed(code)
    files = sorted({i[0] for i in cold})
    mine = {(p, name, line, True) for p, kind, name, _, line, _ in cold if kind in CALLABLE}
    theirs = ctags_items(repo, files) if files else set()
    kinds = collections.Counter(i[1] for i in cold)
    shown = ", ".join(f"{k} {n}" for k, n in kinds.most_common(6))
    agree = row(f"functions and methods of {folder}/ (outline), against ctags", f"{len(mine)} ({shown})",
                f"ctags: {len(theirs)}", mine == theirs, cold_s, diff(sorted(mine), sorted(theirs)))
    same = row("the same outline again, from the cache", f"{warm_s:.2f} s (uncached {cold_s:.2f} s)",
               "equal to the uncached answer", warm == cold, warm_s, "")
    whole = ('items = outline()\nkinds = {}\nfor i in items:\n    kinds[i["kind"]] = kinds.get(i["kind"], 0) + 1\n'
             'print(json.dumps({"items": len(items), "files": len({i["path"] for i in items}), "kinds": kinds}))')
    first, first_notes, first_s = repo.printed(whole, timeout=600)
    again, _, again_s = repo.printed(whole)
    everything = row("the whole repository outlined (every language; items and files as returned)", f"{first['items']:,} items in "
                     f"{first['files']:,} files; {first_s:.2f} s first (the folder above cached), {again_s:.2f} s "
                     "again",
                     "; ".join(first_notes)[:300] or "no note", first == again, again_s, "")
    return [dict(zip(("path", "kind", "name", "qualname", "line", "end_line"), i)) for i in cold], agree, same, \
        everything


def check_callers(repo: Repo, items: list[dict[str, Any]]) -> dict[str, Any]:
    names = collections.Counter(i["name"] for i in items if i["kind"] in CALLABLE and len(i["name"]) > 4)
    name = next((n for n, count in names.most_common() if count == 1), None) or names.most_common(1)[0][0]
    pattern = rf"\b{re.escape(name)}\("
    found, _, took = repo.printed(f'print(json.dumps([f"{{h[\'path\']}}:{{h[\'line\']}}" for h in '
                                  f'grep(pattern={pattern!r}, max_results=100000)]))')
    expected = repo.git_grep(pattern)
    return row(f"callers of {name}() (grep), against git grep", f"{len(found)} lines", f"git grep: {len(expected)}",
               sorted(found) == sorted(expected), took, diff(found, expected))


def check_view(repo: Repo, items: list[dict[str, Any]]) -> dict[str, Any]:
    longest = max((i for i in items if i["kind"] in CALLABLE), key=lambda i: i["end_line"] - i["line"])
    text, _, took = repo.printed(f'print(json.dumps(view(path={longest["path"]!r}, '
                                 f'view_range=[{longest["line"]}, {longest["end_line"]}])))')
    lines = (repo.root / longest["path"]).read_bytes().decode("utf-8", "replace").splitlines(keepends=True)
    expected = "".join(lines[longest["line"] - 1:longest["end_line"]])
    body = expected.strip().splitlines()
    closed = bool(body) and body[-1].strip() in ("}", "};", "end", ")") or repo.language == "Python"
    return row(f"body of the longest function, {longest['qualname']} (view with outline's lines)",
               f"{longest['end_line'] - longest['line'] + 1} lines", "the file's own lines; the body ends its block",
               text == expected and closed, took, "" if closed else f"last line {body[-1]!r}")


def diff(found: Any, expected: Any) -> str:
    mine, theirs = set(map(str, found)), set(map(str, expected))
    parts = []
    if mine - theirs:
        parts.append(f"only codeact ({len(mine - theirs)}): " + ", ".join(sorted(mine - theirs)[:3]))
    if theirs - mine:
        parts.append(f"only the other tool ({len(theirs - mine)}): " + ", ".join(sorted(theirs - mine)[:3]))
    return "; ".join(parts)


def row(task: str, found: str, expected: str, same: bool, took: float, detail: str) -> dict[str, Any]:
    return {"task": task, "codeact": found, "independent": expected, "agree": same, "seconds": round(took, 2),
            "detail": detail}


def evaluate(source: Path, scratch: Path, template: Path) -> dict[str, Any]:
    repo = Repo(source, scratch, template)
    rows = [check_files(repo), check_todos(repo)]
    items, agree, same, whole = check_outline(repo)
    rows += [agree, same, whole, check_callers(repo, items), check_view(repo, items)]
    subprocess.run([str(repo.root / LAUNCHER), "server", "stop"], cwd=repo.root, env=repo.env, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=60)
    return {"repo": repo.name, "commit": repo.before[:12], "language": repo.language, "files": repo.files,
            "stamp_s": round(repo.stamp_s, 1), "launcher_committed": repo.launcher_committed, "absent": repo.absent,
            "rows": rows}


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [f"Machine: {machine_load()} at the end of the run.", ""]
    for result in results:
        lines += [f"#### {result['repo']} ({result['language']}, {result['files']:,} tracked files, commit "
                  f"{result['commit']})", "",
                  f"Stamped with `copier copy --trust --defaults` in {result['stamp_s']} s; `git add -A` committed "
                  f"the launcher: {'yes' if result['launcher_committed'] else 'NO'}."
                  + (f" Not checked out (the mirror lacks their blobs): {', '.join(result['absent'])}."
                     if result["absent"] else ""), "",
                  "| task | codeact | independent tool | agree | s | differences |", "|---|---|---|---|---:|---|"]
        for r in result["rows"]:
            cells = [r["task"], r["codeact"], r["independent"], "yes" if r["agree"] else "**no**", f"{r['seconds']}",
                     r["detail"]]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the Markdown here (default: print it)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    args = parser.parse_args(argv)
    sources = [Path(p) for p in os.environ.get("CODEACT_REAL_REPOS", "").split(os.pathsep) if p]
    if not sources:
        print("no repositories: set CODEACT_REAL_REPOS to git directories or clones (os.pathsep-separated)")
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="codeact-real-repos-"))
    try:
        template = template_snapshot(scratch / "template")
        results = [evaluate(source, scratch, template) for source in sources]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = markdown(results)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
