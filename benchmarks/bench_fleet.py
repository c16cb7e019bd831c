"""Rollout at scale: the update command across many stamped repositories; per-repo time must stay flat.

    python benchmarks/bench_fleet.py [--sizes 5,20] [--json PATH] [--markdown PATH]

Builds a template repo with two tags (this working tree as v0.1.0 and an older layout as v0.0.9), stamps N repos
at v0.0.9, then runs `copier update -a .copier-answers.codeact.yml --trust --defaults --skip-tasks` in each, one
after another as a fleet job would. Prints the per-repo median, the ratio of the largest fleet to the smallest, and
whether per-repo time stayed flat (largest fleet's median within 1.25x of the smallest's).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import GIT_ENV, git, make_repo, snapshot_template  # noqa: E402

# Every update runs the template's refresh migration through the launcher; a fleet job keeps one runtime venv cache
# (CODEACT_VENV) for all repositories, as CI and Renovate runners do, instead of one install per repository.
ENV = {**os.environ, **GIT_ENV,
       "CODEACT_VENV": os.environ.get("CODEACT_VENV") or str(Path(__file__).resolve().parent.parent / ".ci-cache" / "venvs")}


def build_template(root: Path) -> Path:
    repo = snapshot_template(root / "template", tag="v0.1.0")
    agent = repo / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    agent.write_text(agent.read_text().replace("You are the CodeAct agent.", "You were the CodeAct agent."))
    git(repo, "commit", "-qam", "older")
    git(repo, "tag", "v0.0.9")
    return repo


def stamp(template: Path, dest: Path) -> None:
    make_repo(dest)
    subprocess.run(["copier", "copy", "--trust", "--defaults", "--skip-tasks", "--quiet", "--vcs-ref", "v0.0.9",
                    "-d", 'tools=["view","glob","grep"]', str(template), str(dest)], check=True, env=ENV,
                   capture_output=True)
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "codeact")


def update_fleet(repos: list[Path]) -> list[float]:
    times = []
    for repo in repos:
        t0 = time.perf_counter()
        subprocess.run(["copier", "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                        "--skip-tasks", "--quiet"], cwd=repo, check=True, env=ENV, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,20", help="fleet sizes to measure (comma list)")
    parser.add_argument("--markdown", help="also write the table as Markdown to this path")
    parser.add_argument("--json", help="also write the results as JSON to this path")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        template = build_template(root)
        for size in sizes:
            repos = [root / f"fleet{size}" / f"repo{i:03d}" for i in range(size)]
            print(f"stamping {size} repos ...", file=sys.stderr)
            for repo in repos:
                stamp(template, repo)
            print(f"updating {size} repos ...", file=sys.stderr)
            times = update_fleet(repos)
            rows.append({"repos": size, "total_s": sum(times), "per_repo_median_s": statistics.median(times),
                         "per_repo_max_s": max(times)})
    base = rows[0]["per_repo_median_s"]
    lines = ["Updates run one after another with one shared CODEACT_VENV, as a fleet job runs them.", "",
             "| repos | total (s) | per repo, median (s) | per repo, max (s) | median vs smallest fleet |",
             "|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['repos']} | {row['total_s']:.1f} | {row['per_repo_median_s']:.2f} | "
                     f"{row['per_repo_max_s']:.2f} | {row['per_repo_median_s'] / base:.2f}x |")
    ratio = rows[-1]["per_repo_median_s"] / base
    lines += ["", f"Per-repo time flat from {rows[0]['repos']} to {rows[-1]['repos']} repositories: "
                  f"{'yes' if ratio <= 1.25 else 'NO'} ({ratio:.2f}x)."]
    print("\n".join(lines))
    if args.markdown:
        title = "### `copier update` across a fleet of repositories (issue 16: per-repo time stays flat for 20)"
        Path(args.markdown).write_text("\n".join([title, "", *lines]) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if ratio <= 1.25 else 1


if __name__ == "__main__":
    sys.exit(main())
