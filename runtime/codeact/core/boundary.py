"""The workspace boundary: every path a tool touches stays inside the workspace; writes refuse ``.git`` and secrets."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import errno
import os
import re
import subprocess
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, NoReturn

from .. import paths, rundir
from ..errors import CodeactError, PolicyError, ToolTimeout
from ..layout import (
    ANSWERS_FILE,
    LAYOUTS,
    LEGACY_ANSWERS_FILE,
    MANIFEST_FILE,
    for_scope,
    manifest,
    project_of,
    read_manifest,
    scope_of,
)
from ..paths import real_path
from . import hookruns
from .beneath import Opened, open_inside, read_regular_within
from .pathnames import MAX_QUOTED_PATH, quote, readings, unquote
from .resolution import Outside, link_target, realpath_beneath, resolve_beneath, resolve_counted, walk_plain
from .winnames import has_stream, short_name_of, windows_name

# ---------------------------------------------------------------------------------------------- the protected set
# What a program may read but never write. The rules belong to the REPOSITORY and the INSTALL, not to the workspace
# argument: they are matched on the absolute path (as given and after resolving links), so a workspace that is
# `.git`, `.github` or a nested repository changes nothing. Every name is compared case-folded (.GIT, .GitHub/Hooks
# on case-insensitive disks). Each rule: (what it is, why it is refused).
GIT_RULE = (".git", "git runs what its config and hooks name (core.fsmonitor, hooks/); use git through bash instead")
INSTALL_RULE = (".codeact/", "the CodeAct runtime, launcher, hooks and manifest enforce the policy; "
                             "`copier update` changes them, programs never do")
HOOKS_RULE = (".github/hooks/", "Copilot hooks enforce the user's policy and run commands; change them by hand")
AGENTS_RULE = (".github/agents/", "an agent file can start MCP servers (`mcp-servers:`) and widen `tools:`; "
                                  "change it by hand")
CLAUDE_AGENTS_RULE = (".claude/agents/", AGENTS_RULE[1])  # the Copilot CLI reads Claude-format agents too
EXTENSIONS_RULE = (".github/extensions/", "the Copilot CLI runs a repository's extensions (Node.js modules) as "
                                           "processes of the session; change them by hand")
SETTINGS_RULE = (".github/copilot/settings*.json", "Copilot settings (also .claude/settings*.json, which the CLI "
                                                   "reads too) can carry hooks, which run commands; change them by hand")
COMMAND_RULE = ("a command file", "it names commands the host starts (MCP or language servers); change it by hand")
PLUGIN_RULE = ("a plugin manifest", "a Copilot plugin's manifest, hooks, MCP configuration and agents decide what "
                                    "the host starts; change them by hand")
OWNED_RULE = ("a file the template owns", "`copier update` regenerates it (a change is drift, and the instructions, "
                                          "skills and agent steer the model); put your own text in the seeded files")
HOST_RULE = ("a host folder", "the host runs or trusts its files (Copilot's home, codeact's config or cache, "
                             "a venv the runtime runs in or keeps)")
GITDIR_RULE = ("a git directory", "git takes a folder holding HEAD, objects/ and refs/ (or HEAD and commondir) as a "
                                  "repository before it looks for .git, and runs what its config and hooks name; "
                                  "use git through bash instead")
SHORT_NAME_RULE = ("an 8.3 short name", "Windows opens a short name such as GIT~1 as the long name it stands for, "
                                        "which is protected; write the long name")
NPM_RULE = ("npm's project files", "npx, which starts MCP servers (Copilot's and CodeAct's), runs a package "
                                   "installed in node_modules/ before the registry's, and runs what .npmrc names "
                                   "(node-options, script-shell); install with npm through bash, or change it by hand")
HOOK_SCRIPT_RULE = ("a script a hook runs", "the repository's hooks (or a plugin's) run it on the host at every "
                                           "tool call; change it by hand")
HOOKS_UNREAD_RULE = ("a hooks file past what CodeAct reads", "which scripts its hooks run is not known, so no file "
                                                           "they could run is written; shorten the hooks file by hand")
VENV_RULE = ("a virtual environment", "Python reads its site-packages' .pth files and sitecustomize at every start "
                                     "of its interpreter (a hook's .venv/bin/python, uv run, poetry run); install "
                                     "with pip or uv through bash")
STREAM_RULE = ("a data stream", "on Windows `name:stream` writes a stream of `name` (`.git::$INDEX_ALLOCATION` is "
                                "the .git folder); write a plain name")

Rule = tuple[str, str]
PATH_MAX = 4096  # bytes of a path the kernel takes, its NUL included: a longer one is ENAMETOOLONG
# Folders, at any depth: every part of the path is compared.
_FOLDER_PARTS: dict[str, Rule] = {".git": GIT_RULE, ".codeact": INSTALL_RULE, ".claude-plugin": PLUGIN_RULE,
                                  ".plugin": PLUGIN_RULE, "node_modules": NPM_RULE}
# Folders named by two parts, at any depth.
_FOLDER_PAIRS: dict[tuple[str, str], Rule] = {(".github", "hooks"): HOOKS_RULE, (".github", "agents"): AGENTS_RULE,
                                              (".claude", "agents"): CLAUDE_AGENTS_RULE,
                                              (".github", "extensions"): EXTENSIONS_RULE,
                                              (".github", "plugin"): PLUGIN_RULE, ("plugins", "codeact"): PLUGIN_RULE}
# Every protected folder, as a path a hook can match a --workspace or --file value against (the enforcement spec
# reads this; the runtime refuses those values itself, see workspace_refusal).
PROTECTED_FOLDERS: tuple[str, ...] = (*_FOLDER_PARTS, *("/".join(pair) for pair in _FOLDER_PAIRS))
# Files whose commands the host starts (MCP and language servers), at any depth: the Copilot CLI reads every
# .mcp.json from its working folder up to the git root. Matched on the last parts of the path.
COMMAND_FILES: tuple[tuple[str, ...], ...] = (
    (".mcp.json",), (".github", "mcp.json"), (".github", "lsp.json"), (".vscode", "mcp.json"))
# Files whose settings run commands when npx starts a server in their folder (uvx reads no project file).
NPM_FILES = (".npmrc",)
# A plugin folder holds plugin.json (or .claude-plugin/plugin.json, .github/plugin/plugin.json); these of its files,
# and the ones its manifest names under these keys, decide what runs.
# (The Copilot CLI looks for the manifest in this order; .claude-plugin/ and .github/plugin/ are protected by name.)
_PLUGIN_MANIFESTS = (".plugin/plugin.json", "plugin.json", ".github/plugin/plugin.json", ".claude-plugin/plugin.json")
_PLUGIN_FILES = ("plugin.json", ".plugin/plugin.json", "hooks.json", "hooks/hooks.json", ".mcp.json", ".lsp.json",
                 "lsp.json")
# Folders of a plugin whose every file decides what runs: agents (MCP servers, tools) and extensions (Node.js
# modules the Copilot CLI runs as processes of the session), with or without a manifest key naming them.
_PLUGIN_FOLDERS = ("agents", "extensions")
_PLUGIN_KEYS = ("hooks", "mcpServers", "lspServers", "agents", "extensions")
# Names at the top of a work tree, a workspace or an install that are checked once more where they lead when they
# are symbolic links: a link `.github -> config` makes config/hooks/ the hooks folder, `.mcp.json -> x.json` makes
# x.json a command file. (A link deeper down, `sub/.github -> elsewhere`, is caught only by the name written.)
_ANCHORED_NAMES = (".git", ".codeact", ".github", ".github/hooks", ".github/agents", ".github/extensions",
                   ".github/copilot",
                   ".github/plugin", ".claude-plugin", ".plugin", ".claude", ".claude/agents", ".mcp.json", ".github/mcp.json", ".github/lsp.json",
                   ".vscode", ".vscode/mcp.json", "plugins", "plugins/codeact", "node_modules", *NPM_FILES)


def _name_rule(parts: tuple[str, ...]) -> Rule | None:
    """The rule a path's own names break (``parts`` case-folded, absolute), wherever they sit."""
    for index, part in enumerate(parts):
        if part in _FOLDER_PARTS:
            return _FOLDER_PARTS[part]
        if index and (parts[index - 1], part) in _FOLDER_PAIRS:
            return _FOLDER_PAIRS[(parts[index - 1], part)]
    for tail in COMMAND_FILES:
        if parts[-len(tail):] == tail:
            return COMMAND_RULE
    if parts[-1] in NPM_FILES:
        return NPM_RULE
    in_settings = parts[-3:-1] == (".github", "copilot") or parts[-2:-1] == (".claude",)
    if len(parts) >= 3 and in_settings and re.fullmatch(r"settings.*\.json", parts[-1]):
        return SETTINGS_RULE
    return None


# What git needs to see in a folder to take it as a git directory (setup.c, is_git_directory): a HEAD, and objects/
# and refs/ there or, through a commondir file, elsewhere. Case-folded: on a case-insensitive disk `head` is HEAD.
_GITDIR_PARTS = ("HEAD", "objects", "refs", "commondir")
_GITDIR_NAMES = frozenset(name.lower() for name in _GITDIR_PARTS)
_GITDIR_HEADS = frozenset(name[:4] for name in _GITDIR_NAMES)  # a cheap first look at every name of a folder


def _git_parts(folder: str) -> set[str]:
    """Which of the git directory's parts ``folder`` holds, case-folded and as Windows reads names (a folder a
    case-sensitive disk holds as ``Head``, ``OBJECTS/``, ``Refs/`` is a repository once cloned onto macOS)."""
    try:
        return {windows_name(name) for name in os.listdir(folder)
                if (name[:4].lower() in _GITDIR_HEADS or not name.isascii())
                and windows_name(name) in _GITDIR_NAMES}
    except NotADirectoryError:
        return set()
    except OSError:  # unreadable (or gone): what the exact names show
        return {name.lower() for name in _GITDIR_PARTS if os.path.lexists(os.path.join(folder, name))}


def _is_git_directory(names: set[str]) -> bool:
    return "head" in names and ("commondir" in names or {"objects", "refs"} <= names)


def _git_directory(path: Path, within: Path | None = None) -> Path | None:
    """The folder git would take as a repository that ``path`` lies in, or that writing ``path`` would make one
    (its name, or a folder the write creates on the way, is the last part such a folder lacks); None if none.
    ``within``: look no higher than this folder (the workspace root, whose own folders were checked when the
    workspace was)."""
    child = ""
    for folder in (path, *path.parents):
        names = _git_parts(str(folder))
        if child in _GITDIR_NAMES:
            names.add(child)
        if _is_git_directory(names):
            return folder
        if folder == within:
            break
        child = windows_name(folder.name)
    return None


@lru_cache(maxsize=1)
def _short_name_targets() -> tuple[str, ...]:
    """Every protected name a Windows short name may stand for, the strictest rule first (``.git`` before
    ``.github``): the rules' names, the git directory's parts and the parts of every scope's owned paths."""
    names = [*_FOLDER_PARTS, *(n for pair in _FOLDER_PAIRS for n in pair), *(n for t in COMMAND_FILES for n in t),
             *NPM_FILES, *(n for a in _ANCHORED_NAMES for n in a.split("/")), ".claude", "copilot", "settings.json",
             "settings.local.json", *(n for f in _PLUGIN_FILES for n in f.split("/")), *(n.lower() for n in _GITDIR_PARTS), "config", "hooks",
             *(n for layout in LAYOUTS.values() for item in layout.owned for n in item.rstrip("/").split("/"))]
    return tuple(dict.fromkeys(names))


def _kept_inside(path: Path, within: Path | None) -> bool:
    """Whether the rules may look at (and read) ``path``: anywhere outside ``within`` (the checked workspace root:
    the files of the repository and install it lies in are looked at by design), and inside it only where it leads
    to a path inside (from the workspace's own files, :func:`codeact.core.resolution.resolve_beneath`). A committed
    link from inside to outside is never followed: what lies there would decide a write's answer."""
    if within is None or path == within or not path.is_relative_to(within):
        return True
    try:
        resolve_beneath(str(within), str(path))
    except (Outside, OSError):
        return False
    return True


def _present(path: Path, within: Path | None) -> bool:
    """``path.exists()``, where ``path`` is kept inside; a link leading out of ``within`` counts as there, whatever
    lies outside (the stricter answer, the same for every outside state)."""
    return path.exists() if _kept_inside(path, within) else os.path.lexists(path)


def _is_manifest(path: Path, within: Path | None) -> bool:
    return path.is_file() if _kept_inside(path, within) else os.path.lexists(path)


def _plugin_rule(path: Path, folder: Path, within: Path | None = None,
                 listed: tuple[Path, dict[str, object]] | None = None) -> tuple[Rule, str] | None:
    """Whether ``path`` is a file of the plugin in ``folder`` that decides what runs, or a script its hooks run
    (:func:`_plugin_hook_script`): the rule and the hooks file that runs it (None when ``folder`` is not a plugin,
    or the file is none of those). Inside ``within``, a manifest that is a link leading out counts as one, unread.
    ``listed``: a marketplace of the repository lists ``folder`` (that file and its entry), which makes it a plugin
    with or without a manifest of its own (the CLI needs none)."""
    low = "/".join(windows_name(part) for part in path.relative_to(folder).parts)
    manifest = next((folder / m for m in _PLUGIN_MANIFESTS if _is_manifest(folder / m, within)), None)
    if manifest is None and listed is not None:
        if low in _PLUGIN_FILES or low.split("/", 1)[0] in _PLUGIN_FOLDERS:
            return PLUGIN_RULE, ""
        return _plugin_hook_script(path, folder, listed[0], listed[1].get("hooks"), within)
    if manifest is None:  # not a plugin yet: a NEW manifest beside a plugin's other files makes it one
        if low not in ("plugin.json", ".plugin/plugin.json"):
            return None
        found = any(_present(folder / n, within) for n in ("hooks.json", "hooks/hooks.json", ".mcp.json",
                                                             *_PLUGIN_FOLDERS))
        return (PLUGIN_RULE, "") if found else None
    if low in _PLUGIN_FILES or low.split("/", 1)[0] in _PLUGIN_FOLDERS:
        return PLUGIN_RULE, ""
    if not _kept_inside(manifest, within):
        return None
    try:
        import json

        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        data = {}
    for key in _PLUGIN_KEYS:
        value = data.get(key)
        for named in [value] if isinstance(value, str) else value if isinstance(value, list) else ():
            if isinstance(named, str):
                target = os.path.normpath(os.path.join(folder, named)).lower()
                if str(path).lower() == target or str(path).lower().startswith(target.rstrip(os.sep) + os.sep):
                    return PLUGIN_RULE, ""
    return _plugin_hook_script(path, folder, manifest, data.get("hooks"), within)


def _plugin_hook_script(path: Path, folder: Path, manifest: Path, hooks: object,
                        within: Path | None) -> tuple[Rule, str] | None:
    """Whether ``path`` is a script the hooks of the plugin in ``folder`` run (:mod:`codeact.core.hookruns`, read
    from the plugin's folder): its hooks files (``hooks.json``, ``hooks/hooks.json`` and those the manifest's
    ``hooks`` names) and the manifest's inline ``hooks``: the rule, and the hooks file that runs it as the refusal
    names it (:data:`HOOKS_UNREAD_RULE` for a hooks file past what is read of one)."""
    text = str(path)
    if os.path.isdir(text):  # a folder a command names is no script it runs
        return None
    key, exists = hookruns.fold(text), os.path.lexists(text)
    inside = within is not None and folder.is_relative_to(within)
    names = ["hooks.json", "hooks/hooks.json"]
    names += [name for name in ([hooks] if isinstance(hooks, str) else hooks if isinstance(hooks, list) else ())
              if isinstance(name, str) and "\x00" not in name]
    for name in dict.fromkeys(names):
        file = os.path.normpath(os.path.join(folder, name))
        if not Path(file).is_relative_to(folder) or (inside and not _kept_inside(Path(file), within)):
            continue
        targets = _read_hooks(file, str(folder), str(within) if inside else None, within, plugin=True)
        if isinstance(targets, tuple) and _runs(targets, key, exists, within):
            return HOOK_SCRIPT_RULE, _shown(Path(file), within)
        if isinstance(targets, str):
            return HOOKS_UNREAD_RULE, f"{_shown(Path(file), within)}: {targets}"
    if isinstance(hooks, (dict, list)):  # inline hooks of the manifest
        try:
            targets = hookruns.targets_in(hooks, str(folder), plugin=True)
        except hookruns.Unread as exc:
            return HOOKS_UNREAD_RULE, f"{_shown(manifest, within)}: {exc}"
        except hookruns.Stopped as exc:
            raise _late(_shown(manifest, within), exc.timeout) from None
        if _runs(targets, key, exists, within):
            return HOOK_SCRIPT_RULE, _shown(manifest, within)
    return None


def _read_hooks(file: str, root: str, top: str | None, within: Path | None, *, plugin: bool = False
                ) -> tuple[hookruns.Target, ...] | str | None:
    """:func:`codeact.core.hookruns.hook_targets`, or why the file is past what is read of one (the write is
    refused); at the run's deadline a :class:`ToolTimeout` that refuses the write."""
    try:
        return hookruns.hook_targets(file, root, top, plugin=plugin)
    except hookruns.Unread as exc:
        return str(exc)
    except hookruns.Stopped as exc:
        raise _late(_shown(Path(file), within), exc.timeout) from None


def _late(shown: str, timeout: float, what: str = "which scripts the hooks file {} runs") -> ToolTimeout:
    return ToolTimeout(f"the write was refused at the run's deadline, while reading {what.format(shown)} (the "
                       f"{timeout:g} s time limit of the whole run); raise the limit with --timeout")


def _shown(file: Path, within: Path | None) -> str:
    """``file`` as a refusal names it: relative to ``within`` where it lies inside, else its path."""
    return file.relative_to(within).as_posix() if within is not None and file.is_relative_to(within) else str(file)


def _owned_rule(path: Path, project: Path, within: Path | None = None) -> tuple[Rule, str] | None:
    """Whether ``path`` is (in) a file the install at ``project`` owns: the rule and the owned entry."""
    # case-folded and as Windows reads names: a case-insensitive disk, or NTFS, opens the same file
    rel = "/".join(windows_name(part) for part in path.relative_to(project).parts)
    for item in owned_entries(project, within):
        low = item.lower()
        if rel == low.rstrip("/") or (low.endswith("/") and rel.startswith(low)):
            return OWNED_RULE, item
    return None


def owned_entries(project: Path, within: Path | None = None) -> tuple[str, ...]:
    """What the install at ``project`` owns: its manifest's entries that the scope's layout holds, and every entry
    the answers cannot leave out (a manifest is a file of the repository: one emptied by a merged pull request
    must not lift the protection of the instructions, skills or agent); the layout alone without a manifest, or
    with one inside ``within`` that is a link leading out (never read)."""
    scope = scope_of(project)
    layout = for_scope(scope)
    stamped = read_manifest(project) if _kept_inside(project / MANIFEST_FILE, within) else None
    if stamped is None:
        return layout.owned
    always = manifest(scope, {})["owned"]  # what a stamp with every optional answer off still owns
    return tuple(item for item in layout.owned if item in always or item in stamped.owned)


def _ancestors(path: Path) -> list[Path]:
    return [path, *path.parents] if path.is_dir() and not path.is_symlink() else list(path.parents)


def _virtual_environment(path: Path, within: Path | None) -> Path | None:
    """The virtual environment (a folder holding ``pyvenv.cfg``, or a conda or pixi one holding ``conda-meta``,
    whatever its name) ``path`` lies in, or the one writing ``path`` (a ``pyvenv.cfg``) would make, or the
    ``site-packages`` folder it lies in (a venv made later keeps what is there); looked for up to ``within``."""
    if windows_name(path.name) == "pyvenv.cfg":
        return path.parent
    for folder in path.parents:
        if windows_name(folder.name) in ("site-packages", "dist-packages"):  # one not made yet, a conda env's
            return folder
        if os.path.lexists(folder / "pyvenv.cfg") or os.path.lexists(folder / "conda-meta"):
            return folder
        if folder == within:
            break
    return None


def work_trees(path: Path) -> list[Path]:
    """The top levels of the git work trees that contain ``path``, innermost first (nested repositories too): the
    folders that hold anything named ``.git``, a link included whatever it leads to (a committed ``.git`` link to an
    outside path must not make a write's answer tell whether that path exists)."""
    return [folder for folder in _ancestors(path) if os.path.lexists(folder / ".git")]


_GIT_HOOK_NAMES = frozenset((  # githooks(5)
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
    "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
    "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
    "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change"))


class _GitRuns(NamedTuple):
    """What a work tree's git config names inside it (:func:`_git_runs`), and the config files it was read from."""

    folders: tuple[Path, ...]  # core.hooksPath: every file below it
    files: tuple[Path, ...]  # the config files inside the work tree, and those an include names (read or not)
    entries: tuple[tuple[str, dict[str, object], bool], ...]  # its values as commands (_config_commands)
    read: tuple[Path, ...]  # every file whose change makes it read again
    signature: tuple[object, ...]
    # what its values, read as shell commands, run; and a command of the work tree's own config that is not read
    # (every write below it refused), or "": read at a file's first write, by the run's deadline (None: not yet)
    commands: tuple[tuple[hookruns.Target, ...], str] | None = None
    failed: str = ""  # why git's listing of the config failed (every write below the work tree refused), or ""


_GIT_CONFIG_CACHE: dict[str, _GitRuns] = {}
# Keys whose value git runs as a command (git-config(1)): where the reader does not follow one of the repository's
# own, its writes fail closed; any other value (a branch's description) is read for the paths it names only.
_GIT_COMMAND_KEY = re.compile(r"^(?:alias|pager)\.|\.(?:cmd|command|textconv|driver|helper|program|uploadpack"
                              r"|receivepack|gitproxy|proxy|sshcommand|askpass|editor|pager|fsmonitor|external|clean"
                              r"|smudge|process|difffilter|defaultkeycommand|alternaterefscommand)$")


def _git_config_rule(path: Path) -> tuple[Rule, Path, str] | None:
    """GIT_RULE for a file of a work tree containing ``path`` that its git config makes git read or run: the
    folder ``core.hooksPath`` names (husky's ``.husky/_``, a ``.githooks`` folder) and the files named like git
    hooks beside it (husky's stubs in ``.husky/_`` run ``.husky/pre-commit``), the config files and those an
    include names (present or not, its condition met or not), and what any value, read as a shell command as
    hooks are (:mod:`codeact.core.hookruns`), runs (``core.fsmonitor = sh tools/watch.sh``, ``alias.x = !cd tools
    && sh x``, a filter's ``clean``): git runs commands from many keys, so no list of keys is kept."""
    for tree in work_trees(path):
        runs = _git_runs(tree)
        if runs.failed and not os.path.isdir(path):  # a file's write; a workspace is checked before any run
            return GIT_RULE, tree, (f"git could not list its config ({runs.failed}), so what it runs is not known; "
                                    "check that `git config --list` works there")
        for folder in runs.folders:
            if path == folder or path.is_relative_to(folder):
                return GIT_RULE, folder, "its git config names it"
            if path.parent == folder.parent and path.name.lower() in _GIT_HOOK_NAMES:  # husky's .husky/_ runs
                return GIT_RULE, path, "a git hook the hooks folder its git config names runs"  # .husky/pre-commit
        if path in runs.files:
            return GIT_RULE, path, "its git config names it"
        if os.path.isdir(path):  # a workspace (checked before its run's clock starts), not a file's write
            continue
        commands, unread = _git_commands(tree, runs)
        if unread:
            return GIT_RULE, tree, f"its git config runs a command CodeAct does not read ({unread}); simplify it"
        if hookruns.matches(commands, hookruns.fold(str(path)), os.path.lexists(path)):
            return GIT_RULE, path, "its git config names it"
    return None


_GIT_LISTING_TIMEOUT = 10.0  # seconds `git config --list` may take outside a run (a workspace's check)
_GIT_LISTING_BYTES = 4 << 20  # what of its listing is read: past it the listing fails (every write in the tree refused)


def _git_listing(tree: Path) -> tuple[list[tuple[str, str, str]], str]:
    """``tree``'s git config as ``git config --list`` reads it: (scope, origin, ``name\nvalue``) for each value,
    and why git could not list it ("" when it did). git before 2.26 refuses ``--show-scope``: the listing is then
    read with ``--show-origin`` alone (git 2.8), each value's scope told by its file (:func:`_scope_of`).

    In a run, git gets the time left in it: past the deadline (an include naming a FIFO nobody writes blocks git)
    a :class:`ToolTimeout` refuses the write, and git is killed with its process group (:func:`_git_output`)."""
    from ..processes import OutputTooLong
    from .limits import Deadline

    deadline = Deadline.current()
    failed = ""
    for scoped in (True, False):
        command = ["git", "-C", str(tree), "config", "--list", *["--show-scope"] * scoped, "--show-origin", "-z"]
        wait = _GIT_LISTING_TIMEOUT if deadline is None else deadline.remaining()
        try:
            code, stdout, stderr = _git_output(command, wait)
        except subprocess.TimeoutExpired:
            if deadline is not None:
                raise _late(str(tree), deadline.timeout, "the git config of {}") from None
            return [], f"it took over {_GIT_LISTING_TIMEOUT:g} s"
        except OutputTooLong:
            return [], f"it lists over {_GIT_LISTING_BYTES >> 20} MiB (an include named again and again?)"
        except (OSError, subprocess.SubprocessError) as exc:
            return [], f"git did not start: {exc.__class__.__name__}"
        if code == 0:
            items = stdout.decode("utf-8", "replace").split("\0")
            if scoped:
                return list(zip(items[0::3], items[1::3], items[2::3])), ""
            return [(_scope_of(tree, origin), origin, item) for origin, item in zip(items[0::2], items[1::2])], ""
        error = stderr.decode("utf-8", "replace").strip().splitlines()
        failed = f"exit {code}" + (f": {error[0][:200]}" if error else "")
    return [], failed


def _git_output(command: list[str], wait: float, *, limited: bool = True) -> tuple[int, bytes, bytes]:
    """``command``'s exit status, stdout and stderr, within ``wait`` seconds (``subprocess.TimeoutExpired`` past
    them) and :data:`_GIT_LISTING_BYTES` each (:class:`codeact.processes.OutputTooLong` past them: git is killed,
    no more read). Its stdin is empty (an include of ``/dev/stdin`` reads nothing of the host's). On POSIX it runs in a
    process group of its own, killed whole when the wait ends; on Linux under ``timeout -s KILL`` too, so that it
    ends by the deadline even where this process ends first (the run's watchdog exits it running no Python)."""
    import shutil
    import signal
    import sys

    posix = os.name == "posix"
    limiter = shutil.which("timeout") if limited and sys.platform.startswith("linux") else None
    wait = max(wait, 0.01)
    started = [limiter, "-s", "KILL", f"{wait:.3f}", *command] if limiter is not None else command
    from ..processes import communicate_bounded

    with subprocess.Popen(started, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=posix) as process:
        try:  # git includes a file again each time it is named: a few KB of files may list gigabytes
            stdout, stderr = communicate_bounded(process, _GIT_LISTING_BYTES, wait)
        finally:
            if process.returncode is None:  # the wait ended, the listing is too long, or this thread was interrupted
                try:
                    os.killpg(process.pid, signal.SIGKILL) if posix else process.kill()
                except OSError:
                    pass
                process.wait()
    if limiter is not None and process.returncode in (124, 128 + signal.SIGKILL):  # the limiter ended it
        raise subprocess.TimeoutExpired(command, wait)
    if limiter is not None and process.returncode in (125, 126, 127):  # the limiter itself failed: git alone
        return _git_output(command, wait, limited=False)
    return process.returncode, stdout, stderr


def _scope_of(tree: Path, origin: str) -> str:
    """The scope of a value git lists from ``origin`` without ``--show-scope`` (git before 2.26): ``local`` for a
    file inside the work tree (its ``.git`` included) or a git directory's ``config``/``config.worktree`` (a linked
    work tree's common folder), else ``global`` (the user's or the system's files, and what they include)."""
    if not origin.startswith("file:"):
        return "command"
    file = Path(os.path.normpath(tree / origin[len("file:"):]))
    if file.is_relative_to(tree):
        return "local"
    if file.name in ("config", "config.worktree") and os.path.isfile(file.parent / "HEAD"):
        return "local"
    return "global"


def _git_runs(tree: Path) -> _GitRuns:
    """What ``tree``'s git config (every level and include, as ``git config --list`` reads it) names inside it;
    cached while none of the files it was read from changed. Where git cannot list it (an error, a timeout, no
    git), ``failed`` says why and nothing is kept: every write below ``tree`` is refused, never read as no config."""
    cached = _GIT_CONFIG_CACHE.get(str(tree))
    if cached is not None and cached.signature == tuple(map(_stat_key, cached.read)):
        return cached
    listing, failed = _git_listing(tree)
    if failed:
        return _GitRuns((), (), (), (), (), failed=failed)
    origins: dict[Path, None] = {}
    folders: dict[Path, None] = {}
    files: dict[Path, None] = {}
    entries: list[tuple[str, dict[str, object], bool]] = []
    for scope, origin, item in listing:
        file = Path(os.path.normpath(tree / origin[len("file:"):])) if origin.startswith("file:") else None
        if file is not None:
            origins[file] = None
        name, _, value = item.partition("\n")
        low = name.lower()
        if low == "core.hookspath" and value:
            folders[Path(os.path.normpath(os.path.join(tree, os.path.expanduser(value))))] = None
        elif low == "include.path" or (low.startswith("includeif.") and low.endswith(".path")):
            where = os.path.join(file.parent if file is not None else tree, os.path.expanduser(value))
            files[Path(os.path.normpath(where))] = None  # what git reads once it is there, or its condition met
        elif value:  # the repository's own (local, worktree) command: one the reader does not follow fails closed
            own = scope in ("local", "worktree") and _GIT_COMMAND_KEY.search(low) is not None
            entries.append((name, {"bash": value.removeprefix("!")}, own))
    files.update((origin, None) for origin in origins)
    odd = next((f for f in files if not _regular_or_absent(f)), None)
    if odd is not None:  # a FIFO gives git other text at each read than the one read here: fail closed
        return _GitRuns((), (), (), (), (), failed=f"its config reads {odd}, which is not a regular file")
    read = (tree / ".git", tree / ".git" / "config", tree / ".git" / "config.worktree", paths.home() / ".gitconfig",
            paths.xdg_dir("config", os.environ) / "git" / "config", *origins)
    runs = _GitRuns(tuple(f for f in folders if f.is_relative_to(tree) and f != tree),
                    tuple(f for f in files if f.is_relative_to(tree)), tuple(entries), read,
                    tuple(map(_stat_key, read)))
    if len(_GIT_CONFIG_CACHE) >= 64:
        _GIT_CONFIG_CACHE.clear()
    _GIT_CONFIG_CACHE[str(tree)] = runs
    return runs


def _regular_or_absent(file: Path) -> bool:
    """Whether git reads ``file`` as a file's fixed text: a regular file, the null device, or nothing there."""
    import stat

    try:
        mode = os.stat(file).st_mode
    except OSError:
        return True
    return stat.S_ISREG(mode) or str(file) == os.devnull


def _git_commands(tree: Path, runs: _GitRuns) -> tuple[tuple[hookruns.Target, ...], str]:
    """``runs.commands``, read once (:func:`_config_commands`) and kept with ``runs``; at the run's deadline a
    :class:`ToolTimeout` refusing the write, nothing kept (the next run reads them again, in its own time)."""
    if runs.commands is not None:
        return runs.commands
    try:
        commands = _config_commands(list(runs.entries), tree)
    except hookruns.Stopped as exc:
        raise _late(str(tree), exc.timeout, "what the git config of {} runs") from None
    if _GIT_CONFIG_CACHE.get(str(tree)) is runs:
        _GIT_CONFIG_CACHE[str(tree)] = runs._replace(commands=commands)
    return commands


def _config_commands(entries: list[tuple[str, dict[str, object], bool]], tree: Path
                     ) -> tuple[tuple[hookruns.Target, ...], str]:
    """What the git config values ``entries`` (name, the value as a ``bash`` command, whether the work tree's own
    config holds it) run, read from the work tree's top as hooks' commands are; and the first of the work tree's
    own that the reader does not follow (``!cd tools && find . | xargs sh``): its writes fail closed, as a hooks
    file's do. One of the user's own config gives its path-like words instead (a global alias piping into
    ``xargs`` must not refuse every write of every repository)."""
    found: dict[hookruns.Target, None] = {}
    unread = ""
    for name, entry, own in entries:
        try:
            targets = hookruns.targets_in([entry], str(tree))
        except hookruns.Unread as exc:
            if own and not unread:
                unread = f"{name}: {exc}"
            targets = _path_words(str(entry["bash"]), tree)
        found.update(dict.fromkeys(targets))
    return tuple(found), unread


def _path_words(command: str, tree: Path) -> tuple[hookruns.Target, ...]:
    """The words of ``command`` holding a slash, as paths from ``tree``'s top (none past what is read of one)."""
    try:
        words = [word for word in hookruns.shell_words(command) if "/" in word or "\\" in word]
        return hookruns.targets_in([{"args": [f"./{word}" for word in words]}], str(tree)) if words else ()
    except (hookruns.Unread, hookruns.Stopped):
        return ()


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def installs(path: Path, running: Path | None = None, within: Path | None = None) -> list[Path]:
    """The stamped installs ``path`` lies in (folders with an answers file, layout.has_answers), and ``running``.
    Inside ``within``, an answers file that is a link leading out makes no install (never followed)."""
    found = [folder for folder in _ancestors(path) if _has_answers(folder, within)]
    if running is not None and running not in found and (path == running or path.is_relative_to(running)):
        found.append(running)
    return found


def _has_answers(folder: Path, within: Path | None) -> bool:
    """:func:`codeact.layout.has_answers`, counting inside ``within`` only answers files kept inside."""
    return any(_kept_inside(folder / name, within) and (folder / name).is_file()
               for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE))


def running_install() -> Path | None:
    """The destination folder of the install this runtime was vendored into (None when run from a checkout)."""
    from .config import Settings, codeact_home

    home = codeact_home()
    if not (home / "settings.json").is_file():
        return None
    try:
        return project_of(home, Settings.load(home).scope)
    except (IndexError, ValueError, CodeactError):
        return None


def protection(path: Path, *, running: Path | None = None, host: tuple[Path, ...] = (),
               within: Path | None = None, user_hooks: tuple[str, ...] = (),
               enabled_hooks: tuple[str, ...] = ()) -> tuple[Rule, Path, str] | None:
    """Why ``path`` (absolute, normalised) must not be written: ``(rule, where, entry)`` — ``where`` is the folder the
    rule is anchored at (the path itself for a name rule) — or None. ``within`` (a checked workspace root that
    contains ``path``) bounds the search for a git directory above it; ``user_hooks`` are the user's own hooks
    files (:func:`user_hooks_files`), whose commands run in the workspace too; ``enabled_hooks`` those of them
    that the workspace's own settings enable (the repository's: they fail closed)."""
    rule = _name_rule(tuple(windows_name(part) for part in path.parts))
    if rule:
        return rule, path, ""
    for part in path.parts[1:]:
        if os.name == "nt" and has_stream(part):
            return STREAM_RULE, path, part
        alias = short_name_of(part, _short_name_targets())
        if alias:
            return SHORT_NAME_RULE, path, f"{part} may stand for {alias}"
    git_dir = _git_directory(path, within if within is not None and path.is_relative_to(within) else None)
    if git_dir:
        return GITDIR_RULE, git_dir, ""
    configured = _git_config_rule(path)
    if configured:
        return configured
    for folder in host:
        if path == folder or path.is_relative_to(folder):
            return HOST_RULE, folder, ""
    venv = _virtual_environment(path, within)
    if venv is not None:
        return VENV_RULE, venv, ""
    listed = _listed_plugins(path, within)
    for folder in path.parents:
        plugged = _plugin_rule(path, folder, within, listed.get(folder))
        if plugged:
            return plugged[0], folder, plugged[1]
    for project in installs(path, running, within):
        owned = _owned_rule(path, project, within)
        if owned:
            return owned[0], project, owned[1]
    return _hook_script(path, within) or _user_hook_script(path, within, user_hooks, enabled_hooks)


_MARKETPLACES = (".plugin/marketplace.json", ".github/plugin/marketplace.json", ".claude-plugin/marketplace.json")


def _listed_plugins(path: Path, within: Path | None) -> dict[Path, tuple[Path, dict[str, object]]]:
    """The plugin folders above ``path`` that a marketplace manifest in a folder above it (up to ``within``) lists
    by a local ``source``, each with that manifest and its entry: the CLI loads such a folder's hooks, agents and
    MCP servers whether or not it holds a ``plugin.json``."""
    import json

    found: dict[Path, tuple[Path, dict[str, object]]] = {}
    for top in path.parents:
        for name in _MARKETPLACES:
            market = top / name
            inside = _kept_inside(market, within)
            read = read_regular_within(market, str(within) if within is not None else None,
                                       hookruns.MAX_HOOKS_BYTES) if inside else None
            try:
                data = json.loads(read[0][:hookruns.MAX_HOOKS_BYTES].decode("utf-8", "replace")) if read else None
            except (ValueError, RecursionError):
                continue
            plugins = data.get("plugins") if isinstance(data, dict) else None
            metadata = data.get("metadata") if isinstance(data, dict) else None
            root = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
            base = top / root if isinstance(root, str) and "\x00" not in root else top  # relative sources' base
            for entry in plugins if isinstance(plugins, list) else ():
                source = entry.get("source") if isinstance(entry, dict) else None
                if isinstance(source, str) and "\x00" not in source:
                    for folder in dict.fromkeys((base / source, top / source)):  # as the CLI reads it, or not
                        found.setdefault(Path(os.path.normpath(folder)), (market, entry))
        if top == within:
            break
    return found


def user_hooks_files(environ: Mapping[str, str] | None = None, workspace: Path | None = None) -> tuple[str, ...]:
    """The hooks files the Copilot CLI runs in every session, in the session's folder, from outside it: the user's
    own (``$COPILOT_HOME/hooks/**/*.json``, the inline ``hooks`` of ``$COPILOT_HOME/settings*.json``) and those of
    the plugins the user, or ``workspace``'s own settings files, enabled (:func:`_plugin_hooks_files`); at most
    :data:`_MAX_USER_HOOKS_FILES` and one more, which makes them unread."""
    return _session_hooks_files(environ, workspace)[0]


def _session_hooks_files(environ: Mapping[str, str] | None, workspace: Path | None
                         ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`user_hooks_files`, and those of them that the workspace's own settings files enable (and the user's
    do not): the repository's hooks, which fail closed where they are past what is read (:func:`_user_hook_script`)."""
    home = paths.copilot_home(os.environ if environ is None else environ)
    found = _settings_files(home)
    for top, folders, files in os.walk(home / "hooks"):
        folders.sort()
        found += [os.path.join(top, name) for name in sorted(files) if name.lower().endswith(".json")]
        if len(found) > hookruns.MAX_HOOKS_FILES:
            break
    settings = [Path(file) for file in found if os.path.dirname(file) == str(home)]
    own = _plugin_hooks_files(settings, home / "installed-plugins")
    enabled: list[str] = []
    if workspace is not None:
        enabled = _plugin_hooks_files([Path(file) for folder in (workspace / ".github" / "copilot",
                                                                 workspace / ".claude")
                                       for file in _settings_files(folder)], None)
    found += own + [file for file in enabled if file not in own]
    found = list(dict.fromkeys(found))[:_MAX_USER_HOOKS_FILES + 1]
    return tuple(found), tuple(file for file in enabled if file not in own)


_MAX_USER_HOOKS_FILES = 256  # the user's hooks files and those of the plugins enabled; past it, unread
_PLUGIN_HOOKS_FILES = ("hooks.json", "hooks/hooks.json", *_PLUGIN_MANIFESTS)  # a manifest's inline hooks are read


def _settings_files(folder: Path) -> list[str]:
    """``settings*.json`` of ``folder`` (the CLI's settings files), sorted."""
    try:
        return sorted(str(folder / name) for name in os.listdir(folder)
                      if re.fullmatch(r"settings.*\.json", name, re.IGNORECASE) and (folder / name).is_file())
    except OSError:
        return []


def _plugin_hooks_files(settings: list[Path], installed: Path | None) -> list[str]:
    """The hooks files of the plugins enabled: those of a live local marketplace that one of the ``settings``
    files names (``extraKnownMarketplaces`` with a ``directory`` source, ``enabledPlugins``), and the copies under
    ``installed``. The CLI runs their hooks with ``$CLAUDE_PROJECT_DIR`` and ``$COPILOT_PROJECT_DIR`` set to the
    session's folder, so a plugin's hook may run the repository's own script."""
    import json

    folders: list[Path] = []
    for file in settings:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        markets = data.get("extraKnownMarketplaces") if isinstance(data, dict) else None
        for key, on in (enabled.items() if isinstance(enabled, dict) else ()):
            name, _, market = str(key).rpartition("@")
            known = markets.get(market) if isinstance(markets, dict) else None
            source = known.get("source") if isinstance(known, dict) else None
            if on is not True or not isinstance(source, dict) or not isinstance(source.get("path"), str):
                continue
            top = Path(os.path.normpath(file.parent / os.path.expanduser(source["path"])))
            folders += [listed for listed, (_, entry) in _listed_plugins(top / "x", None).items()
                        if entry.get("name") == name]
    for here, subfolders, files in os.walk(installed) if installed is not None else ():
        subfolders.sort()
        if any(name in files for name in ("plugin.json", "hooks.json")) or {".plugin", ".claude-plugin", "hooks",
                                                                            ".github"} & set(subfolders):
            folders.append(Path(here))
        if len(folders) > _MAX_USER_HOOKS_FILES or here.count(os.sep) - str(installed).count(os.sep) >= 3:
            subfolders.clear()
    found: list[str] = []
    for folder in dict.fromkeys(folders):
        names = list(_PLUGIN_HOOKS_FILES)
        for named in _PLUGIN_MANIFESTS:  # the hooks files its manifest names
            try:
                hooks = json.loads((folder / named).read_text(encoding="utf-8")).get("hooks")
            except (OSError, ValueError, RecursionError, AttributeError):
                continue
            names += [name for name in ([hooks] if isinstance(hooks, str) else hooks if isinstance(hooks, list)
                                        else ()) if isinstance(name, str) and "\x00" not in name]
        found += [str(folder / name) for name in dict.fromkeys(names) if (folder / name).is_file()]
    return found


def _user_hook_script(path: Path, within: Path | None, files: tuple[str, ...],
                      enabled: tuple[str, ...] = ()) -> tuple[Rule, Path, str] | None:
    """Whether ``path`` (in the workspace ``within``) is a file the user's own hooks ``files`` run, read with the
    workspace's top as their folder (where the CLI starts them): the rule, the hooks folder and the file. Those of
    ``files`` the workspace holds, or that its own settings enable (``enabled``), are the repository's hooks: one
    past what is read refuses the write (:data:`HOOKS_UNREAD_RULE`), as a hooks file of ``.github/hooks`` does."""
    if within is None or not files or os.path.isdir(path):
        return None
    folder = Path(os.path.dirname(files[0]))
    if len(files) > _MAX_USER_HOOKS_FILES:
        return HOOKS_UNREAD_RULE, folder, f"more than {_MAX_USER_HOOKS_FILES} of your own hooks files"
    key, exists = hookruns.fold(str(path)), os.path.lexists(path)
    for file in files:
        targets = _read_hooks(file, str(within), None, within)
        # One past what is read names nothing here: the user's own hooks (a `cd ~/.copilot/hooks && ./notify.sh`,
        # a plugin's `cd "${CLAUDE_PLUGIN_ROOT}"`) are no repository's, and must not refuse every write of every
        # workspace; what they run of the workspace is then not known (docs/security.md says so). The
        # repository's own (a plugin its settings enable, a hooks file it holds) fail closed.
        if isinstance(targets, str) and (file in enabled or Path(file).is_relative_to(within)):
            return HOOKS_UNREAD_RULE, Path(file).parent, f"{_shown(Path(file), within)}: {targets}"
        if isinstance(targets, tuple) and targets and _runs(targets, key, exists, within):
            return HOOK_SCRIPT_RULE, Path(file).parent, Path(file).name
    return None


# Where the Copilot CLI reads hooks in the folder it starts in: (folder, sub-folder, file names).
_HOOK_PLACES = ((".github", "hooks", re.compile(r".*\.json", re.IGNORECASE)),
                (".github", "copilot", re.compile(r"settings.*\.json", re.IGNORECASE)),
                (".claude", "", re.compile(r"settings.*\.json", re.IGNORECASE)))


def _hook_files(folder: str, within: Path | None) -> tuple[list[str], str | None]:
    """The files whose hooks the Copilot CLI runs when started in ``folder``: ``.github/hooks/**/*.json``,
    ``.github/copilot/settings*.json`` and ``.claude/settings*.json`` (two stats where there are none), and the
    place holding more than ``hookruns.MAX_HOOKS_FILES`` of them (the CLI runs them all: which scripts they run
    is then not known), else None. Inside ``within``, a folder that is a link leading out is not listed."""
    found: list[str] = []
    past: str | None = None
    tops: dict[str, bool] = {}
    for top, sub, names in _HOOK_PLACES:
        if top not in tops:
            tops[top] = os.path.isdir(os.path.join(folder, top))
        where = os.path.join(folder, top, sub) if sub else os.path.join(folder, top)
        if not tops[top] or (sub and not os.path.isdir(where)) or not _kept_inside(Path(where), within):
            continue
        named = _listed(where, names, within, deep=sub == "hooks")
        if len(named) > hookruns.MAX_HOOKS_FILES:
            past = os.path.relpath(where, folder)
        found += named[:hookruns.MAX_HOOKS_FILES]
    return found, past


def _listed(where: str, names: re.Pattern[str], within: Path | None, *, deep: bool) -> list[str]:
    """The files of the folder ``where`` whose names match ``names``, sorted; with ``deep`` those of its
    sub-folders too, at any depth, as the CLI reads ``.github/hooks/**/*.json`` (not a dot-folder; inside
    ``within`` not one that is a link leading out). Past :data:`hookruns.MAX_HOOKS_FILES` files or folders it
    stops, returning more than that many (the caller's sign of a place past what is read)."""
    found: list[str] = []
    pending, folders = [where], 0
    while pending and len(found) <= hookruns.MAX_HOOKS_FILES:
        current = pending.pop(0)
        folders += 1
        if folders > hookruns.MAX_HOOKS_FILES:  # a tree of folders past what is read (or a cycle of links)
            return found + [current] * (hookruns.MAX_HOOKS_FILES + 1 - len(found))
        try:
            with os.scandir(current) as entries:
                listed = sorted((entry.name, entry.is_dir()) for entry in entries)
        except OSError:
            continue
        found += [os.path.join(current, name) for name, is_dir in listed if not is_dir and names.fullmatch(name)]
        if deep:
            pending += [os.path.join(current, name) for name, is_dir in listed if is_dir and not name.startswith(".")
                        and _kept_inside(Path(current, name), within)]
    return found


def _hook_script(path: Path, within: Path | None) -> tuple[Rule, Path, str] | None:
    """Whether ``path`` is a file a hooks file of a folder above it runs (:mod:`codeact.core.hookruns`): the rule,
    that folder and the hooks file, relative to it (:data:`HOOKS_UNREAD_RULE` where a hooks file is past what is
    read of one: which scripts it runs is not known). Inside ``within`` a hooks file is read only where it leads to a file inside
    (a link leading out is never followed), so what lies outside never decides the answer."""
    key: str | None = None
    exists = False
    text = str(path)
    folder = os.path.dirname(text)
    while True:
        files, past = _hook_files(folder, within)
        if past is not None:
            return HOOKS_UNREAD_RULE, Path(folder), f"{past}: more than {hookruns.MAX_HOOKS_FILES} hooks files"
        if files:
            if key is None:
                if os.path.isdir(text):  # a folder a command names (`eslint --fix src/`) is no script it runs
                    return None
                key, exists = hookruns.fold(text), os.path.lexists(text)
            inside = within is not None and Path(folder).is_relative_to(within)
            for file in files:
                if inside and not _kept_inside(Path(file), within):
                    continue
                targets = _read_hooks(file, folder, str(within) if inside else None, within)
                if isinstance(targets, str):
                    return HOOKS_UNREAD_RULE, Path(folder), f"{Path(file).relative_to(folder).as_posix()}: {targets}"
                if targets and _runs(targets, key, exists, within):
                    return HOOK_SCRIPT_RULE, Path(folder), Path(file).relative_to(folder).as_posix()
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _runs(targets: tuple[hookruns.Target, ...], key: str, exists: bool, within: Path | None) -> bool:
    """Whether the path folded as ``key`` is one of ``targets``, as named or where a target leads through links
    (``tools -> other``: the hook runs other/audit.sh). Inside ``within`` a target is resolved from the workspace's
    own files (:func:`codeact.core.resolution.resolve_beneath`); one that leads out is not followed."""
    if hookruns.matches(targets, key, exists):
        return True
    for target in targets:
        if target.glob:
            if _pattern_through_link(target, key, exists, within):
                return True
            continue
        if not target.named:  # a bare word is matched as written (it runs only where it exists)
            continue
        if _name_rule(tuple(target.key.split("/"))):  # refused by name, through a top-level link too
            continue
        if within is not None and Path(target.path).is_relative_to(within):
            try:
                real = resolve_beneath(str(within), target.path, lexical=True)[0]
            except (Outside, OSError):
                continue
        else:
            real = os.path.realpath(target.path)
        if real != target.path and hookruns.fold(real) == key:
            return True
    return False


def _pattern_through_link(target: hookruns.Target, key: str, exists: bool, within: Path | None) -> bool:
    """Whether the path folded as ``key`` matches the pattern ``target`` once its fixed leading folders are
    resolved through links (``hk -> tools/hooks``: ``hk/*.sh`` runs ``tools/hooks/a.sh``), as the shell and npx
    follow them. Inside ``within`` the folders are resolved from the workspace's own files; one leading out is not
    followed."""
    parts = target.path.split(os.sep)
    fixed = next((n for n, part in enumerate(parts) if any(char in part for char in "*?[")), len(parts))
    prefix = os.sep.join(parts[:fixed])
    if fixed < 2 or not prefix:
        return False
    if within is not None and Path(prefix).is_relative_to(within):
        try:
            real = resolve_beneath(str(within), prefix, lexical=True)[0]
        except (Outside, OSError):
            return False
    else:
        real = os.path.realpath(prefix)
    if real == prefix:
        return False
    folded, top = hookruns.fold(target.path), hookruns.fold(real)
    rest = folded[len(hookruns.fold(prefix)):]
    rebased = re.sub(r"([*?[])", r"[\1]", top) + rest  # the real folders matched as text, the rest a pattern
    return hookruns.matches((target._replace(path=real + target.path[len(prefix):], key=rebased),), key, exists)


def _linked_rule(real: Path, anchors: list[Path], running: Path | None, root: Path) -> tuple[Rule, Path, str] | None:
    """The rule ``real`` breaks through a symbolic link at an anchor: ``real`` is checked once more under the name
    the link gives it (``.github -> config``: config/hooks/x.json is .github/hooks/x.json). Where the link leads is
    read from the workspace's own files (:func:`codeact.core.resolution.link_target`): a target through an outside
    link is read as its text, never asked of the kernel, so the answer tells nothing of what lies outside."""
    for anchor in anchors:
        names = list(_ANCHORED_NAMES)
        if _has_answers(anchor, root) or anchor == running:
            names += [item.rstrip("/") for item in owned_entries(anchor, root)]
        for name in names:
            link = anchor / name
            found = link_target(str(root), str(anchor), name)
            target = Path(found) if found is not None else None
            if target is not None and (real == target or real.is_relative_to(target)):
                rule = protection(link / real.relative_to(target), running=running, within=root)
                if rule:
                    return rule
    return None


def refusal_text(rule: Rule, entry: str = "") -> str:
    """``.git: git runs …``: the rule's name (with the owned entry it matched) and its reason."""
    name, why = rule
    return f"{name} ({entry}): {why}" if entry else f"{name}: {why}"


# ------------------------------------------------------------------------------------------ the workspace argument
# Folders of the system: never a workspace, nor anything inside them. Exact-only ones may hold projects below them
# (/usr/src/app, /var/www, /var/lib/jenkins/workspace, /opt/project) but are no workspace themselves.
SYSTEM_TREES = ("/etc", "/boot", "/dev", "/proc", "/sys", "/run", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
                "/usr/include", "/usr/share", "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib",
                "/usr/local/share", "/var/log", "/var/spool", "/var/cache", "/var/mail", "/var/lib/dpkg",
                "/var/lib/apt", "/System", "/Library", "/private/etc", "/private/var/db", "/Applications")
SYSTEM_FOLDERS = ("/", "/usr", "/usr/local", "/usr/src", "/var", "/var/lib", "/opt", "/srv", "/home", "/Users",
                  "/mnt", "/media", "/root", "/tmp", "/var/tmp", "/private", "/private/var", "/private/tmp")
_PASS_INSTEAD = "pass --workspace with the repository you work on (its git top level), or a folder of your own code"
# Subcommands whose workspace programs write in: they also refuse home's dot-folders and the XDG folders.
SANDBOX_COMMANDS = ("run", "tools", "describe", "search")


def workspace_refusal(path: Path | str, *, sandbox: bool = True, environ: Mapping[str, str] | None = None,
                      running: Path | None = None, host: tuple[Path, ...] | None = None) -> str | None:
    """Why ``path`` cannot be a workspace (None when it can): a missing folder, a protected folder, a system folder,
    the home folder or one containing it, and for a ``sandbox`` (programs write there) home's dot-folders and the
    XDG config, data and state folders. Checked on the path as given and on where it leads. ``running`` and
    ``host`` default to :func:`running_install` and :func:`host_folders`."""
    env = os.environ if environ is None else environ
    if not os.fspath(path):
        return f"workspace is empty; {_PASS_INSTEAD}"
    given = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    if not given.exists():
        return f"workspace {path} does not exist; {_PASS_INSTEAD}"
    if not given.is_dir():
        return f"workspace {path} is not a folder; {_PASS_INSTEAD}"
    real = Path(real_path(str(given))[0])
    running = running_install() if running is None else running
    host = (host_folders(env) if host is None else host) if sandbox else ()
    homes = paths.homes(env)
    for candidate in dict.fromkeys((given, real)):
        found = protection(candidate, running=running, host=host)
        if found:
            (name, why), where, entry = found
            entry = str(where) if (name, why) in (HOST_RULE, GITDIR_RULE) else entry
            return (f"workspace {path} is refused — {refusal_text((name, why), entry)}. A workspace inside a "
                    f"protected folder would let programs write it; {_PASS_INSTEAD}")
        text = candidate.as_posix()
        if candidate in homes and text != "/":
            continue  # /root as root's home: said below, as a home folder
        if text in SYSTEM_FOLDERS or any(text == t or text.startswith(t + "/") for t in SYSTEM_TREES):
            return (f"workspace {path} is refused — {'the root folder' if text == '/' else 'a system folder'}: "
                    f"{text} holds the system, not a project; {_PASS_INSTEAD}")
    for home in homes:
        if real == home:
            return (f"workspace {path} is refused — the home folder: it holds your shell start-up files, SSH keys "
                    f"and tools on PATH; {_PASS_INSTEAD}")
        if home.is_relative_to(real):
            return f"workspace {path} is refused — it contains your home folder ({home}); {_PASS_INSTEAD}"
        if sandbox and real.is_relative_to(home) and real.relative_to(home).parts[0].startswith("."):
            dot = home / real.relative_to(home).parts[0]
            return (f"workspace {path} is refused — a dot-folder of your home ({dot}): it holds configuration, keys "
                    f"and tools the host runs; {_PASS_INSTEAD}")
    if sandbox:
        for kind in ("config", "data", "state"):
            folder = Path(real_path(str(paths.xdg_dir(kind, env)))[0])
            if real == folder or real.is_relative_to(folder):
                return (f"workspace {path} is refused — the XDG {kind} folder ({folder}): the host reads and runs "
                        f"its files; {_PASS_INSTEAD}")
    return None


def check_workspace(path: Path | str, *, sandbox: bool = True, environ: Mapping[str, str] | None = None,
                    running: Path | None = None, host: tuple[Path, ...] | None = None) -> Path:
    """``path`` resolved, or :class:`PolicyError` (exit 2) saying why it cannot be a workspace and what to pass."""
    refused = workspace_refusal(path, sandbox=sandbox, environ=environ, running=running, host=host)
    if refused:
        raise PolicyError(refused)
    return Path(real_path(os.path.expanduser(os.fspath(path)))[0])


def check_program_file(path: Path | str) -> None:
    """Refuse a ``--file`` program that lies in a protected folder (PolicyError, exit 2)."""
    given = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    for candidate in dict.fromkeys((given, Path(os.path.realpath(given)))):
        found = protection(candidate, running=running_install())
        if found and found[0] is not HOOKS_UNREAD_RULE:  # a hooks file too large to read protects no program
            (name, why), _, entry = found
            raise PolicyError(f"--file {path} is refused — {refusal_text((name, why), entry)}. Programs are not "
                              "read from protected folders; keep the program elsewhere or pass it with --code")


def find_workspace(start: Path | str | None = None) -> Path:
    """The git top-level of ``start`` (default: the current folder), else ``start`` itself."""
    here = Path(start or os.getcwd()).resolve()
    probe = here
    while True:
        if (probe / ".git").exists():
            return probe
        if probe.parent == probe:
            break
        probe = probe.parent
    try:  # worktrees and unusual layouts: ask git, which is slower
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        if top.returncode == 0 and top.stdout.strip():
            return Path(top.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return here


def host_folders(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """Folders whose files the host runs or trusts: Copilot's home (its MCP servers, trusted folders, hooks), the
    user's codeact config (user tools run on the host), codeact's cache (the runtime's venvs), the warm servers'
    folder (sockets, logs, the live providers' token), codeact's state (``run --session`` globals) and the venvs a
    Python start runs files of (:func:`codeact.paths.venv_folders`: a ``.pth`` there runs at the next server
    start), resolved."""
    env = os.environ if environ is None else environ
    found: tuple[str | Path, ...] = (paths.copilot_home(env), paths.user_config_dir(env), paths.codeact_cache_dir(env),
                                     rundir.server_folder(env), paths.xdg_dir("state", env) / "codeact",
                                     *paths.venv_folders(env))
    return tuple(dict.fromkeys(Path(real_path(str(p))[0]) for p in found))


def _under(root: str, candidate: str) -> str | None:
    """``candidate`` relative to ``root`` with ``/`` separators (``.`` for the root), else ``None``."""
    if candidate == root:
        return "."
    if candidate.startswith(root + os.sep):
        rest = candidate[len(root) + 1:]
        return rest if os.sep == "/" else Path(rest).as_posix()
    return None


class Workspace(NamedTuple):
    """The folder the sandbox may reach. Paths are resolved (symlinks included) before any check."""

    root: Path
    allow_secrets: bool = False
    host_folders: tuple[Path, ...] = ()  # those inside ``root``: never written (see :func:`host_folders`)
    running: Path | None = None  # the destination folder of the install this runtime belongs to
    user_hooks: tuple[str, ...] = ()  # the user's own hooks files (:func:`user_hooks_files`)
    enabled_hooks: tuple[str, ...] = ()  # those of them the workspace's own settings enable (they fail closed)

    @classmethod
    def at(cls, root: Path | str, *, allow_secrets: bool = False,
           environ: Mapping[str, str] | None = None) -> Workspace:
        """The workspace at ``root``, or :class:`PolicyError` when ``root`` cannot be one (see
        :func:`workspace_refusal`: a protected or system folder, home, one of home's dot-folders)."""
        env = os.environ if environ is None else environ
        running, host = running_install(), host_folders(env)
        path = check_workspace(root, environ=env, running=running, host=host)
        return cls(path, allow_secrets, tuple(f for f in host if f.is_relative_to(path)), running,
                   *_session_hooks_files(env, path))

    def resolve(self, path: str | os.PathLike[str], *, must_exist: bool = False, lexical: bool = False) -> Path:
        """The real path of ``path`` (relative to the workspace root), refused if it leaves the workspace."""
        return Path(self.resolve_text(path, must_exist=must_exist, lexical=lexical))

    def resolve_text(self, path: str | os.PathLike[str], *, must_exist: bool = False, lexical: bool = False) -> str:
        """:meth:`resolve` as a string: for a tool that only opens the path (no ``Path`` made, a call's hot path)."""
        return self.resolve_stat(path, must_exist=must_exist, lexical=lexical)[0]

    def resolve_stat(self, path: str | os.PathLike[str], *, must_exist: bool = False, lexical: bool = False
                     ) -> tuple[str, os.stat_result | None]:
        """:meth:`resolve_text`, and the ``lstat`` of what it found where the resolution made one (``None``: not
        known). A relative path whose every part is a plain name is walked below the (real) root with one ``lstat``
        a part: no part a symbolic link means the path is its own real path. Any other path (a link on the way,
        ``..``, a missing part, an absolute path) is resolved part by part from the workspace's own files
        (:func:`codeact.core.resolution.resolve_beneath`): one that passes outside the root at any step, or
        through a link whose target does, is refused from its text before anything outside is looked at, so the
        answer says nothing of what lies there. ``..`` after a missing part or a file raises FileNotFoundError or
        NotADirectoryError as the kernel does (``absent/../x``), unless ``lexical`` (``os.path.realpath``'s answer,
        for a path not opened)."""
        given = os.fspath(path)
        raw = self.reading(given)  # a name that is not UTF-8 comes back quoted (codeact.core.pathnames)
        if not raw:
            raise PolicyError("path is empty; give a path relative to the workspace root, e.g. 'src/app.py'")
        if "\x00" in raw:
            raise PolicyError("path contains a NUL byte")
        root = str(self.root)  # strings, not pathlib: every tool call resolves its paths (cheaper on the hot path)
        if os.sep != "/":  # pragma: no cover - Windows: the kernel's answer
            return self._resolve_by_kernel(raw, must_exist)
        if not raw.startswith("/"):
            walked = walk_plain(root, raw)
            if walked is not None:
                return walked
        try:
            found, st, broken = resolve_beneath(root, raw, lexical=lexical)
        except Outside:
            raise PolicyError(f"path {raw!r} is outside the workspace; use paths inside it, relative to its root"
                              ) from None
        except OSError as exc:  # ``absent/..``, ``file/..``: the kernel resolves no further
            shown = given[len(root) + 1:] if given.startswith(root + "/") else given
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(f"no such file or folder: {shown}") from None
            raise OSError(exc.errno, exc.strerror, shown) from None  # NotADirectoryError, ELOOP
        if must_exist and broken == errno.ENOTDIR:  # ``file/x``: the kernel's "Not a directory"
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), self.display(found))
        if must_exist and broken:
            raise FileNotFoundError(f"no such file or folder: {self.display(found)}")
        return found, st

    def reading(self, given: str) -> str:
        """The real path the program's ``given`` stands for (:func:`codeact.core.pathnames.readings`): where the
        sandbox's pathlib made its text stand for several, the one that exists in the workspace (looked at as
        :meth:`resolve_stat` looks, nothing outside), else the first; :class:`PolicyError` when more than one
        exists, rather than a guess that opens another file than the one listed."""
        if len(given) > MAX_QUOTED_PATH or len(os.fsencode(unquote(given))) >= PATH_MAX:
            # the kernel's answer, before anything splits a path it would never take (a 40 MB 'a/../a/../...')
            shown = given if len(given) <= 80 else given[:80] + "..."
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), shown)
        found = readings(given)
        if len(found) == 1 or os.sep != "/":
            return found[0]
        present = [text for text in found if self._exists_beneath(text)]
        if len(present) > 1:
            shown = " or ".join(repr(self.display(os.path.join(str(self.root), text))) for text in present)
            raise PolicyError(f"path {given!r} reads as {shown}, both in the workspace (the sandbox's pathlib drops "
                              "the \\ of a quoted name); join the names with os.path.join, or give the path quoted "
                              "as the listing shows it")
        return present[0] if present else found[0]

    def _exists_beneath(self, text: str) -> bool:
        if "\x00" in text or not text:
            return False
        try:
            return not resolve_beneath(str(self.root), text)[2]
        except (Outside, OSError):
            return False

    def _resolve_by_kernel(self, raw: str, must_exist: bool) -> tuple[str, None]:  # pragma: no cover - Windows
        root = str(self.root)
        found, exists = real_path(os.path.join(root, raw))  # an absolute ``raw`` replaces the root, as it should
        if found != root and not found.startswith(root + os.sep):
            raise PolicyError(f"path {raw!r} is outside the workspace; use paths inside it, relative to its root")
        if must_exist and not (exists or os.path.exists(found)):
            raise FileNotFoundError(f"no such file or folder: {self.display(found)}")
        return found, None

    def open_inside(self, path: str | os.PathLike[str], *, look: bool = False) -> Opened:
        """A read-only descriptor of ``path`` that cannot lie outside the workspace whatever is swapped in
        meanwhile (see :func:`codeact.core.beneath.open_inside`); the caller closes it."""
        return open_inside(self, path, look=look)

    def contains(self, path: str, *, loop: bool = False) -> bool:
        """Whether ``path``, a path the program gives (quoted forms read as the names they stand for), resolves
        inside the workspace (links followed), as :meth:`resolve` would accept it. ``loop``: a path through more
        links than the kernel follows (a loop) counts as inside when every link met lies inside."""
        try:
            self.resolve(path, lexical=True)
            return True
        except PolicyError:
            return False
        except OSError as exc:  # a path through more links than the kernel follows
            if not loop or exc.errno != errno.ELOOP:
                return False
        try:
            self.realpath(path)
            return True
        except (PolicyError, OSError):
            return False

    def realpath(self, path: str) -> str:
        """``os.path.realpath``'s answer (CPython 3.11, not strict) for the program's ``path``, from the workspace's
        own files (:func:`codeact.core.resolution.realpath_beneath`): where it meets a link loop, the rest is kept
        as text. :class:`PolicyError` where it leaves the workspace."""
        raw = self.reading(path)
        if os.sep != "/":  # pragma: no cover - Windows: the kernel's answer
            return self._resolve_by_kernel(raw, False)[0]
        try:
            return realpath_beneath(str(self.root), raw)
        except Outside:
            raise PolicyError(f"path {raw!r} is outside the workspace; use paths inside it, relative to its root"
                              ) from None

    def real_inside(self, path: str) -> str | None:
        """Where the host path ``path`` leads (its names as the file system holds them: never read as a quoted
        form), links followed, when that lies inside the workspace and reaches it by no step outside (see
        :meth:`resolve_stat`); else ``None``. Raises FileNotFoundError or NotADirectoryError where the kernel
        resolves no further (a link to ``absent/../x``)."""
        return self.follow_inside(path)[0]

    def follow_inside(self, path: str, links: int = 0) -> tuple[str | None, int]:
        """:meth:`real_inside`, and the links followed counted on from ``links`` (those the same lookup followed
        before ``path``, as the kernel counts them): past its 40, OSError ELOOP."""
        if os.sep != "/":  # pragma: no cover - Windows
            found = real_path(path)[0]
            return (found if _under(str(self.root), found) is not None else None), links + 1
        try:
            found, _, _, links = resolve_counted(str(self.root), path, links=links)
        except Outside:
            return None, links
        return found, links

    def resolve_for_write(self, path: str | os.PathLike[str]) -> Path:
        """Like :meth:`resolve`, and also refuses what a program must not write (see :func:`protection`): the rules
        of the git work trees that contain the path and of the installs it lies in, whatever the workspace root —
        checked on the path as given, on where it leads, and under the names symbolic links give it."""
        real = self.resolve(path)
        raw = Path(self.reading(os.fspath(path)))
        given = Path(os.path.normpath(raw if raw.is_absolute() else self.root / raw))
        for candidate in dict.fromkeys((given, real)):
            found = protection(candidate, running=self.running, host=self.host_folders, within=self.root,
                               user_hooks=self.user_hooks, enabled_hooks=self.enabled_hooks)
            if found:
                self._refuse(candidate, found)
        anchors = dict.fromkeys((self.root, *work_trees(real), *installs(real, self.running, self.root)))
        found = _linked_rule(real, list(anchors), self.running, self.root)
        if found:
            self._refuse(real, found)
        return real

    def _refuse(self, path: Path, found: tuple[Rule, Path, str]) -> NoReturn:
        rule, where, entry = found
        if rule is HOST_RULE or rule is GITDIR_RULE:
            entry = self.display(where)
        raise PolicyError(f"writing {self.display(path)} is refused — {refusal_text(rule, entry)}")

    def display(self, path: Path | str) -> str:
        """``path`` relative to the workspace root, as the program and the user see it — never a host path."""
        root, text = str(self.root), os.fspath(path)
        shown = _under(root, os.path.normpath(text) if os.path.isabs(text) else text)
        if shown is None:  # only then the real path (a link into the workspace): string work on every tool call
            shown = _under(root, os.path.realpath(text))
        return "<outside workspace>" if shown is None else quote(shown)

    def scrub(self, message: str) -> str:
        """Replace host paths of the workspace in an error message with workspace-relative ones."""
        root = str(self.root)
        return message.replace(root + os.sep, "").replace(root, ".")

    def check_secrets(self, text: str, path: Path, *, before: str = "") -> None:
        """Refuse ``text`` (what ``path`` would hold after a write) if it holds a credential ``before`` (what it
        holds now) did not, unless the user allowed secrets; the rules live in :mod:`codeact.core.secrets`."""
        if self.allow_secrets:
            return
        from . import secrets  # only on writes: its patterns compile on first use

        secrets.check(text, where=self.display(path), before=before)
