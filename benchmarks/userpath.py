"""The path a user runs: a git repository stamped by the real ``copier copy``, driven through its launcher.

Shared by bench_budgets.py, bench_corpus.py and bench_heldout.py. Everything goes through ``.codeact/bin/codeact``
(the venv prepared once by its ``setup``), so the benchmarks do not depend on the runtime's module layout.
Two modes per measurement: ``cold`` (``CODEACT_SERVER=0``: everything in the launched process) and ``warm`` (a
server started by ``codeact server start`` before timing), where the runtime has a server; where it has none the
warm rows say so.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.conftest import TEMPLATE_VERSION, VENV_CACHE, git, make_repo, snapshot_template  # noqa: E402

LAUNCHER = Path(".codeact") / "bin" / "codeact"
DEMO_SERVER = ROOT / "tests" / "mcp" / "servers" / "demo_server.py"


@dataclass
class Timing:
    """Median wall and CPU milliseconds of one measured command (CPU: the process and its reaped children)."""

    wall_ms: float
    cpu_ms: float
    samples: list[float] = field(default_factory=list)


@dataclass
class UserRepo:
    """A stamped repository and how to run its launcher."""

    root: Path  # scratch folder holding it
    repo: Path
    venv: Path  # CODEACT_VENV: shared venvs, one per requirements hash
    python: Path  # the launcher's venv Python (for floors measured with the same interpreter)
    base_env: dict[str, str]
    server: bool  # does this runtime have `codeact server`?

    @property
    def launcher(self) -> Path:
        return self.repo / LAUNCHER

    def env(self, mode: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a ``cold`` (``CODEACT_SERVER=0``) or ``warm`` run, plus ``extra``."""
        env = {**self.base_env, **(extra or {})}
        if mode == "cold":
            env["CODEACT_SERVER"] = "0"
        return env

    def codeact(self, *args: str, mode: str = "cold", timeout: float = 300, check: bool = True,
                extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.launcher), *args], cwd=self.repo, env=self.env(mode, extra), text=True,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)
        if check and done.returncode != 0:
            raise SystemExit(f"codeact {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def run_cmd(self, code: str) -> list[str]:
        return [str(self.launcher), "run", "--code", code]

    def start_server(self, extra: Mapping[str, str] | None = None) -> bool:
        """Start this workspace's server (for the environment ``extra`` adds); False where there is none."""
        if not self.server:
            return False
        self.codeact("server", "start", mode="warm", timeout=120, extra=extra)
        return True

    def server_pid(self, extra: Mapping[str, str] | None = None) -> int | None:
        """The pid of the server that serves runs in the environment ``extra`` adds (its CPU counts in the runs)."""
        if not self.server:
            return None
        done = self.codeact("server", "status", "--json", mode="warm", check=False, timeout=60, extra=extra)
        shown = json.loads(done.stdout or "{}")
        return int(shown["pid"]) if shown.get("running") else None

    def stop_server(self, extra: Mapping[str, str] | None = None) -> None:
        if self.server:
            self.codeact("server", "stop", mode="warm", check=False, timeout=60, extra=extra)


def launcher_env(home: Path, venv: Path) -> dict[str, str]:
    """A clean environment: no CODEACT_* of the caller, a private HOME, the shared venv folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_") and k not in ("PYTHONPATH",)}
    env.update(HOME=str(home), CODEACT_VENV=str(venv), CODEACT_CONFIG_DIR=str(home / "codeact-config"),
               COPILOT_HOME=str(home / ".copilot"), LANG="C.UTF-8")
    return env


def venv_python(venv_dir: Path, requirements: Path) -> Path:
    """The venv the launcher picks: the one whose stamp is byte-equal to the requirements (its own rule)."""
    want = requirements.read_bytes()
    for venv in sorted(venv_dir.iterdir()):
        stamp = venv / ".codeact-requirements.txt"
        if (venv / "bin" / "python").exists() and stamp.exists() and stamp.read_bytes() == want:
            return venv / "bin" / "python"
    raise SystemExit(f"no venv under {venv_dir} matches {requirements} after `codeact setup`")


def server_supported(launcher: Path, cwd: Path, env: dict[str, str]) -> bool:
    """``codeact server status --json`` exits 0 or 1 with one JSON object where the runtime has a server, 2
    ("invalid choice") where it has none; anything else is a broken runtime and stops the benchmark."""
    done = subprocess.run([str(launcher), "server", "status", "--json"], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)
    if done.returncode == 2 and "invalid choice" in done.stderr:
        return False
    if done.returncode in (0, 1):
        try:
            if isinstance(json.loads(done.stdout), dict):
                return True
        except ValueError:
            pass
    raise SystemExit(f"codeact server status --json: exit {done.returncode}, stdout {done.stdout[:300]!r}, "
                     f"stderr {done.stderr[-800:]}")


def template_snapshot(dest: Path) -> Path:
    """This template as a tagged git repository: the working tree, or the commit ``$CODEACT_BENCH_REF`` names
    (``HEAD``: measure what is committed while others edit the working tree)."""
    ref = os.environ.get("CODEACT_BENCH_REF")
    if not ref:
        return snapshot_template(dest)
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", f"template at {ref}")
    git(dest, "tag", TEMPLATE_VERSION)
    return dest


def stamp_repo(root: Path, *, files: dict[str, str] | None = None, mcp: dict[str, dict[str, Any]] | None = None,
               venv: Path = VENV_CACHE) -> UserRepo:
    """Stamp CodeAct (this template, see :func:`template_snapshot`) into a fresh git repository under ``root``.

    ``mcp`` is written to ``.mcp.json`` (``mcpServers``) and discovered (``codeact discover``), as the copy's task
    does; the launcher's venv is prepared once by ``codeact setup``."""
    from copier import run_copy

    root.mkdir(parents=True, exist_ok=True)
    template = template_snapshot(root / "template")
    repo = root / "repo"
    make_repo(repo, files or {"README.md": "# bench\n", "src/small.py": "def f(x):\n    return x + 1\n"})
    if mcp:
        (repo / ".mcp.json").write_text(json.dumps({"mcpServers": mcp}, indent=2) + "\n")
    run_copy(str(template), repo, data={"enforcement": "off"}, defaults=True, unsafe=True, vcs_ref="HEAD",
             quiet=True, skip_tasks=True, overwrite=True)
    shutil.rmtree(root / "template")
    venv.mkdir(parents=True, exist_ok=True)
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = launcher_env(home, venv)
    setup = subprocess.run([str(repo / LAUNCHER), "setup"], cwd=repo, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=900)
    if setup.returncode != 0:
        raise SystemExit(f"codeact setup failed ({setup.returncode}): {setup.stderr[-1000:]}")
    if mcp:
        found = subprocess.run([str(repo / LAUNCHER), "discover"], cwd=repo, env={**env, "CODEACT_SERVER": "0"},
                               capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
        if found.returncode != 0:
            raise SystemExit(f"codeact discover failed ({found.returncode}):\n{found.stdout}\n{found.stderr}")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "codeact")
    python = venv_python(venv, repo / ".codeact" / "requirements.txt")
    return UserRepo(root, repo, venv, python, env, server_supported(repo / LAUNCHER, repo, env))


def scratch(prefix: str) -> Path:
    """A scratch folder the caller removes (``shutil.rmtree``)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu(pid: int) -> float:
    """CPU seconds of the process ``pid`` and every process below it (the warm server, its Monty workers, the
    MCP servers it started), the children they reaped included (``/proc``: utime, stime, cutime, cstime)."""
    total, todo, seen = 0.0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += sum(int(v) for v in fields[11:15]) / _TICK  # utime stime cutime cstime (fields 14-17)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                todo += [int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return total


def time_processes(cmds: Mapping[str, tuple[Sequence[str], Mapping[str, str]]], runs: int, *, cwd: Path,
                   check_out: dict[str, str] | None = None,
                   ok_codes: dict[str, tuple[int, ...]] | None = None,
                   servers: Mapping[str, int | None] | None = None,
                   cwds: Mapping[str, Path] | None = None) -> dict[str, Timing]:
    """Median wall and CPU time of each whole process tree; the commands take turns so all see the same load.

    The first round warms caches and is dropped. ``check_out[name]``, where given, must be in that command's
    stdout (a run that printed the wrong thing is not a measurement); ``ok_codes[name]`` are its accepted exit codes
    (default 0 only). CPU is this process's reaped children (the launcher, its thin client, what they ran) plus,
    for a command ``servers`` names, what the warm server's whole process tree (:func:`tree_cpu`) spent meanwhile.
    ``cwds[name]``, where given, is the folder that command runs in (another repository), else ``cwd``."""
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(runs + 1):
        for name, (cmd, env) in cmds.items():
            server = (servers or {}).get(name)
            server0 = tree_cpu(server) if server else 0.0
            cpu0, started = _children_cpu(), time.perf_counter()
            done = subprocess.run(list(cmd), cwd=(cwds or {}).get(name, cwd), env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True)
            wall, cpu = (time.perf_counter() - started) * 1000, (_children_cpu() - cpu0) * 1000
            if server:
                if not Path(f"/proc/{server}").exists():
                    raise SystemExit(f"the warm server {server} of {' '.join(cmd)} exited: its CPU is not counted")
                cpu += (tree_cpu(server) - server0) * 1000
            if done.returncode not in (ok_codes or {}).get(name, (0,)):
                raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
            want = (check_out or {}).get(name)
            if want is not None and want not in done.stdout.decode():
                raise SystemExit(f"{' '.join(cmd)} printed {done.stdout.decode()[:300]!r}, expected {want!r}")
            if i:
                walls[name].append(wall)
                cpus[name].append(cpu)
    return {name: Timing(statistics.median(walls[name]), statistics.median(cpus[name]), walls[name])
            for name in cmds}


def machine_load() -> str:
    """The machine's load as the figures should be read with it: the 1-minute load average against the CPUs."""
    cpus = os.cpu_count() or 1
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return f"load unknown ({cpus} CPUs)"
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {cpus} CPUs"


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "FAIL"


def row(name: str, measured: str, baseline: str, ratio: float | None, target: float | None) -> str:
    """One Markdown row: ``| measurement | measured | baseline | ratio | target | verdict |``.

    A ratio at or below 0 (a difference of two noisy timings that came out negative) is shown as noise, not judged.
    """
    goal = f"<= {target:g}x" if target is not None else "(info)"
    if ratio is not None and ratio <= 0:
        return f"| {name} | {measured} | {baseline} | noise ({ratio:.2f}) | {goal} | {'NOISE' if target else ''} |"
    shown = f"{ratio:.2f}x" if ratio is not None else ""
    met = verdict(ratio, target) if ratio is not None and target is not None else ""
    return f"| {name} | {measured} | {baseline} | {shown} | {goal} | {met} |"


TABLE_HEAD = "| measurement | measured | baseline | ratio | target | verdict |\n|---|---:|---:|---:|---|---|"


def ms(t: Timing) -> str:
    return f"{t.wall_ms:.1f} ms (CPU {t.cpu_ms:.0f})"
