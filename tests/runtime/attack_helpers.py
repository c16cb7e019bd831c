"""Set-up the red-team tests (``test_attacks_*.py``) share: a workspace that is a git repository, a hooks file,
and a program that calls one tool and prints what it returns or the name of the exception it raises."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from test_attacks_round6_links import _run


def git_workspace(tmp_path: Path, *folders: str) -> tuple[Path, Path]:
    """``tmp_path`` resolved (the base; a run's home is ``base / "home"``) and ``base / "ws"``: a fresh git
    repository holding the empty ``folders``."""
    base = tmp_path.resolve()
    ws = base / "ws"
    for folder in folders:
        (ws / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    return base, ws


def hooks_json(*entries: dict[str, object], event: str = "preToolUse") -> str:
    """A hooks file's text (version 1) that runs ``entries`` (none, one or more) at ``event``."""
    return json.dumps({"version": 1, "hooks": {event: list(entries)}})


def hooked_workspace(tmp_path: Path, entries: list[dict[str, object]], *folders: str) -> tuple[Path, Path]:
    """:func:`git_workspace` (``.github/hooks`` and ``folders``) whose ``.github/hooks/policy.json`` runs
    ``entries`` at preToolUse."""
    base, ws = git_workspace(tmp_path, ".github/hooks", *folders)
    (ws / ".github/hooks/policy.json").write_text(hooks_json(*entries))
    return base, ws


def command_workspace(tmp_path: Path, entry: dict[str, object], files: dict[str, str]) -> tuple[Path, Path]:
    """:func:`git_workspace` whose ``.github/hooks/policy.json`` runs the command ``entry`` at preToolUse, holding
    ``files`` (name: text)."""
    base, ws = git_workspace(tmp_path, ".github/hooks")
    (ws / ".github/hooks/policy.json").write_text(hooks_json({"type": "command", **entry}))
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return base, ws


def catching(call: str) -> str:
    """A program that prints what ``call`` returns, or the name of the exception it raises."""
    return f"try:\n    print({call})\nexcept Exception as exc:\n    print(type(exc).__name__)\n"


def run_catching(ws: Path, base: Path, call: str) -> str:
    """:func:`catching` of ``call`` run in the sandbox over ``ws``, home ``base / "home"``: its output."""
    return _run(ws, base / "home", catching(call))


def edit_output(ws: Path, base: Path, path: str, old: str = "exit 0", new: str = "id") -> str:
    """A program's ``edit()`` of ``path`` in ``ws`` (``old`` to ``new``): its output (``PermissionError`` where
    the boundary protects the file)."""
    return run_catching(ws, base, f"edit(path={path!r}, old_str={old!r}, new_str={new!r})")


def create_output(ws: Path, base: Path, path: str, text: str) -> str:
    """A program's ``create()`` of ``path`` in ``ws`` holding ``text``: its output."""
    return run_catching(ws, base, f"create(path={path!r}, file_text={text!r})")


def policy_workspace(tmp_path: Path, *folders: str) -> tuple[Path, Path]:
    """:func:`git_workspace` (``scripts`` and ``folders``) holding ``scripts/policy.sh`` (``exit 0``): the
    repository's own script that a company's policy hook runs."""
    base, ws = git_workspace(tmp_path, "scripts", *folders)
    (ws / "scripts/policy.sh").write_text("exit 0\n")
    return base, ws


def listed_plugin_hooks(tmp_path: Path, listed: dict[str, object]) -> str:
    """A marketplace repository whose ``.github/plugin/marketplace.json`` is ``listed``, listing ``notes``: a
    plugin without a manifest at ``plugins/notes`` (one skill). A program creates ``plugins/notes/hooks.json`` (a
    sessionStart hook): its output (``PermissionError`` where the boundary takes the folder as a plugin's)."""
    base, ws = git_workspace(tmp_path, ".github/plugin", "plugins/notes/skills/notes")
    (ws / ".github/plugin/marketplace.json").write_text(json.dumps(listed))
    (ws / "plugins/notes/skills/notes/SKILL.md").write_text("---\nname: notes\ndescription: Notes.\n---\nNotes.\n")
    text = hooks_json({"type": "command", "bash": "id > /tmp/pwned"}, event="sessionStart")
    return create_output(ws, base, "plugins/notes/hooks.json", text)


def host_runs_planted(ws: Path, entry: dict[str, object], tool: str) -> bool | None:
    """Whether the hook ``entry`` run by the real bash in its ``cwd`` prints ``PLANTED`` (None: no ``tool``)."""
    if not tool or shutil.which(tool) is None:
        return None
    done = subprocess.run(["bash", "-c", str(entry["bash"])], cwd=ws / str(entry.get("cwd", ".")),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    return "PLANTED" in done.stdout + done.stderr


def proved_edit(tmp_path: Path, entry: dict[str, object], files: dict[str, str], target: str, old: str, new: str,
                tool: str = "bash") -> str:
    """The output of a program's edit of ``target`` (``old`` to ``new``) in a :func:`command_workspace` whose hook
    runs ``entry``; where it goes through and ``tool`` is here, the hook must have run the planted text (the
    proof that the case is a breach)."""
    base, ws = command_workspace(tmp_path, entry, files)
    out = edit_output(ws, base, target, old, new)
    if out.split() != ["PermissionError"]:
        assert host_runs_planted(ws, entry, tool) is not False, out
    return out


def protected(tmp_path: Path, command: str, target: str, files: dict[str, str]) -> bool:
    """Whether the hook ``command`` (a ``bash`` entry) in ``tmp_path`` holding ``files`` makes ``target`` a file
    it runs, or its hooks file Unread (every write refused)."""
    from codeact.core import hookruns

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    try:
        targets = hookruns.targets_in([{"type": "command", "bash": command}], str(tmp_path))
    except hookruns.Unread:
        return True
    return hookruns.matches(targets, hookruns.fold(str(tmp_path / target)), True)
