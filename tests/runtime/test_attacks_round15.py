"""Red team, round 15: attacks on round 14's fixes (issue 40)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from attack_helpers import (
    create_output,
    edit_output,
    git_workspace,
    hooked_workspace,
    hooks_json,
    listed_plugin_hooks,
    policy_workspace,
)
from test_attacks_round6_links import _run
from test_attacks_round12_redteam import _edit_hook_target

_REASON = "open (issue 40, red team round 15): {}"


def _git_ws(tmp_path: Path, config: list[tuple[str, str]]) -> tuple[Path, Path]:
    """A git work tree whose ``.git/config`` holds ``config``, with ``tools/x.sh`` and ``shared.gitconfig``."""
    base, ws = git_workspace(tmp_path, "tools")
    for key, value in config:
        subprocess.run(["git", "-C", str(ws), "config", "--add", key, value], check=True, capture_output=True)
    (ws / "tools/x.sh").write_text("#!/bin/sh\nexit 0\n")
    (ws / "shared.gitconfig").write_text("[core]\n\tautocrlf = false\n")
    return base, ws


def _edit(tmp_path: Path, config: list[tuple[str, str]], path: str = "tools/x.sh", old: str = "exit 0",
          new: str = "id > /tmp/pwned") -> str:
    base, ws = _git_ws(tmp_path, config)
    return edit_output(ws, base, path, old, new)


# ------------------------------------------------------------ a git command whose program is not its first word
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("core.pager", "sh tools/x.sh"),
        ("filter.f.clean", "python3 tools/x.sh"),
        ("diff.d.textconv", "bash tools/x.sh --text"),
        ("core.fsmonitor", "env FOO=1 tools/x.sh"),
        ("credential.helper", "!f() { tools/x.sh \"$@\"; }; f"),
    ],
)
def test_a_script_a_git_config_command_runs_after_its_first_word_is_protected(
    tmp_path: Path, key: str, value: str
) -> None:
    """0cc25c8 protects the program of a git config key that git runs only when it is the value's FIRST word and
    holds a slash (``tools/watch.sh --fast``). A command git runs through the shell is as often an interpreter and
    a script: ``core.pager = sh tools/x.sh``, ``filter.f.clean = python3 tools/x.sh`` (how LFS-like filters and
    textconv drivers of a repository are set up), ``env X=1 tools/x.sh``, ``!f() { tools/x.sh; }; f``. The script
    is the second word, left writable: ``edit()`` succeeds and git runs the program's text at the next
    ``git log``/``git add``/``git diff``/credential fill (host code execution). Checked with git 2.39:
    ``git -c filter.f.clean='sh tools/y.sh' add a.txt`` and ``core.pager='sh tools/x.sh'`` (``git log`` on a tty)
    ran the script. Fix: read the value as a command line with hookruns (the reader hooks use: interpreters,
    ``env``, functions; Unread when not understood) and protect every script it names inside the work tree."""
    out = _edit(tmp_path, [(key, value)])
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ git config keys whose command is not read
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("alias.lg", "!tools/x.sh"),
        ("credential.https://github.com.helper", "!tools/x.sh"),
        ("core.gitProxy", "tools/x.sh"),
        ("remote.origin.uploadpack", "tools/x.sh"),
        ("difftool.d.cmd", "tools/x.sh \"$LOCAL\" \"$REMOTE\""),
        ("interactive.diffFilter", "tools/x.sh"),
        ("gpg.ssh.defaultKeyCommand", "tools/x.sh"),
    ],
)
def test_a_script_a_git_config_key_not_in_the_list_runs_is_protected(tmp_path: Path, key: str, value: str) -> None:
    """_GIT_RUN_KEYS lists the keys whose value git runs, and misses others: ``alias.*`` with ``!`` (run by ``git
    lg``), ``credential.<url>.helper`` (the per-host form of credential.helper, run at every fetch/push to that
    host), ``core.gitProxy`` (git:// fetches), ``remote.<name>.uploadpack``/``receivepack``, ``difftool.*.cmd``,
    ``mergetool.*.cmd``, ``interactive.diffFilter`` (``git add -p``), ``gpg.ssh.defaultKeyCommand``,
    ``core.alternateRefsCommand``, ``sendemail.*``. Checked with git 2.39: ``git -c alias.zz='!tools/x.sh' zz``,
    ``git -c 'credential.https://example.com.helper=!tools/x.sh' credential fill``, ``git -c
    core.gitProxy=tools/x.sh ls-remote git://example.com/x`` and ``git -c remote.r.uploadpack=tools/x.sh fetch r``
    each ran ``tools/x.sh``. The script stays writable (``edit()`` succeeds) and the agent's next ``git lg``/
    ``git fetch``/``git push`` runs the program's text on the host (host code execution). Fix: protect by what
    git does, not a short list: any key whose value is ``!``-prefixed or that git documents as a command
    (``*.cmd``, ``*.command``, ``*.helper``, ``*.program``, ``*proxy``, ``*pack``, ``*filter``,
    ``*keycommand``, ``*refscommand``, ...), or every path-like word of any value in the work tree."""
    out = _edit(tmp_path, [(key, value)])
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ a config file git config includes
@pytest.mark.parametrize(
    ("key", "value"),
    [("include.path", "../shared.gitconfig"), ("includeIf.gitdir:/.path", "../shared.gitconfig")],
)
def test_a_git_config_file_the_repositorys_config_includes_is_protected(tmp_path: Path, key: str, value: str) -> None:
    """A repository that shares its git settings keeps them in a tracked file and has each clone include it
    (``git config include.path ../.gitconfig``, a common set-up line; ``includeIf`` likewise). ``git config
    --list`` reads the included file, so 0cc25c8 sees what it sets at the time, but the file itself is an
    ordinary one: a program's ``edit()`` of ``shared.gitconfig`` succeeds and may set ``core.pager``,
    ``core.fsmonitor``, ``core.hooksPath``, ``alias.*``, ``filter.*`` to ANY command (``sh -c '...'``, by name, not
    a path inside the work tree). Checked with git 2.39: with ``include.path = ../shared.gitconfig``, a written
    ``[alias] inc = !tools/x.sh`` ran at ``git inc`` and ``[core] pager = sh tools/x.sh`` at ``git log`` on a tty.
    The agent's next git command runs the program's text on the host (host code execution). The cache signature
    of ``_git_runs`` does not hold the included file either, so what it sets later is not seen until
    ``.git/config`` changes. Fix: protect every file ``git config --list --show-origin`` names (outside ``.git``)
    inside the work tree, as ``.git/config`` is, and put those files in the cache signature."""
    out = _edit(tmp_path, [(key, value)], path="shared.gitconfig", old="autocrlf = false",
                new="pager = sh -c 'id > /tmp/pwned'")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ husky: the hook git runs is one folder up
_HUSKY_H = """\
#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
[ "${HUSKY-}" = "0" ] && exit 0
export PATH="node_modules/.bin:$PATH"
sh -e "$s" "$@"
"""


@pytest.mark.parametrize("call", ["edit", "create"])
def test_a_husky_hook_the_hooks_path_folder_runs_is_protected(tmp_path: Path, call: str) -> None:
    """0cc25c8 protects the folder ``core.hooksPath`` names and docs/security.md names husky's ``.husky/_`` as the
    case. But husky (v9, the layout ``npx husky init`` writes) keeps only generated stubs there (``.husky/_`` is
    git-ignored): ``.husky/_/pre-commit`` is ``. "$(dirname "$0")/h"``, and ``h`` runs ``sh -e .husky/pre-commit``
    -- the repository's TRACKED hook, one folder up, which stays writable. Checked with git 2.39 and husky 9's
    ``h`` (this test's stub, cut to what runs): with ``core.hooksPath = .husky/_``, ``git commit`` printed what
    ``.husky/pre-commit`` echoes. A program's ``edit()`` of ``.husky/pre-commit`` (or ``create()`` of
    ``.husky/commit-msg``/``.husky/pre-push``) succeeds and the agent's own next ``git commit``/``git push`` runs
    its text on the host (host code execution) in a repository that uses husky -- the most common JavaScript
    set-up. Fix: where ``core.hooksPath`` ends in ``/_`` with an ``h`` (or ``husky.sh``) beside the stubs, also
    protect the git hook names (``pre-commit``, ``commit-msg``, ``pre-push``, ...) in the folder above; or protect
    every file whose name is a git hook's in that folder and its parent."""
    base, ws = git_workspace(tmp_path, ".husky/_")
    subprocess.run(["git", "-C", str(ws), "config", "core.hooksPath", ".husky/_"], check=True, capture_output=True)
    (ws / ".husky/_/h").write_text(_HUSKY_H)
    for hook in ("pre-commit", "commit-msg"):
        (ws / ".husky/_" / hook).write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    (ws / ".husky/_/.gitignore").write_text("*\n")
    (ws / ".husky/pre-commit").write_text("npm test\n")
    if call == "edit":
        out = edit_output(ws, base, ".husky/pre-commit", "npm test", "id > /tmp/pwned")
    else:
        out = create_output(ws, base, ".husky/commit-msg", "id > /tmp/pwned\n")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ hookruns: a cd to a folder the reader does not know
@pytest.mark.parametrize(
    "command",
    [
        "shopt -s cdable_vars; d=impl; cd d && bash run",
        "bash -O cdable_vars -c 'd=impl; cd d; bash run'",
        "declare -n r=d; d=impl; cd $r; bash run",
        "typeset -n r=d; d=impl; cd $r; bash run",
        "x='cd impl'; $x; bash run",
        'cd "`echo impl`" && bash run',
        "bash -c 'cd \"$1\"; bash run' _ impl",
        "f() { cd \"$1\"; bash run; }; f impl",
        "set -- impl; cd \"$1\"; bash run",
        "cd $(dirname impl/x) && bash run",
        "for d in impl; do cd $d; done; bash run",
    ],
)
def test_a_script_after_a_cd_to_a_folder_the_reader_does_not_know_is_protected(tmp_path: Path, command: str) -> None:
    """8535f9a makes a word the command's own reading sets (``$1``, ``$@``, a ``read`` variable) Unread where it
    stands at a command's place or as the script an interpreter runs, but not where it is ``cd``'s folder: the
    cwd is then lost and the next relative script (``bash run``) is looked for in the folder before -- where it
    does not exist, so nothing is protected. Likewise a folder bash finds another way: ``shopt -s cdable_vars``
    (``cd d`` goes to ``$d``), a nameref (``declare -n r=d``), a variable that holds the whole ``cd impl``
    command, a command substitution (``cd $(dirname impl/x)``), a literal loop's variable (``for d in impl; do cd
    $d; done``). Checked with bash 5.2: each form printed what ``impl/run`` echoes. The program's ``edit()`` of
    ``impl/run`` succeeds and the CLI runs its text at the next tool call (host code execution). Fix: a ``cd``
    (``pushd``, ``Set-Location``) whose folder is not a literal or a known variable -- a positional or special
    parameter, an own variable of :func:`_own_names`, a nameref, a word after ``shopt -s cdable_vars``, a
    command word that is a variable -- makes the hooks file Unread (as 8535f9a does for the script itself).
    d49c961 read the positional, substitution and loop forms (they pass now); after it, cdable_vars (also as
    ``bash -O cdable_vars``), namerefs (``declare -n``, ``typeset -n``), a variable holding ``cd impl`` and a
    backtick substitution inside double quotes (``cd "`echo impl`"``, checked: ran ``impl/run``) stay open."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "impl/run")
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize(
    "command",
    [
        "x='cd impl; bash run'; eval \"$x\"",
        "x='cd impl; bash run'; bash -c \"$x\"",
        "c='cd impl && bash run'; sh -c \"$c\"",
    ],
)
def test_a_script_a_variables_command_text_runs_is_protected(tmp_path: Path, command: str) -> None:
    """``eval 'cd impl; bash run'`` and ``sh -c 'cd impl && bash run'`` are read (8535f9a: "a shell's -c text and
    eval's are read the same way"), and ``c='bash run'; cd impl && sh -c "$c"`` too; but the same text kept in a
    variable first (``x='cd impl; bash run'; eval "$x"``, ``bash -c "$x"``) is not: the variable's value is read
    as one word ``cd impl; bash run`` -- no folder change, no ``run`` word -- and ``impl/run`` stays writable.
    Checked with bash 5.2: each printed what ``impl/run`` echoes. The program's ``edit()`` succeeds and the CLI
    runs its text at the next tool call (host code execution). Fix: read a ``-c``/``eval`` text that is a known
    variable as the variable's value (the same reading, two levels deep), or make it Unread."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "impl/run")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ d82d187: what git config reads LATER
def _create(tmp_path: Path, config: list[tuple[str, str]], path: str, text: str) -> str:
    base, ws = _git_ws(tmp_path, config)
    (ws / "tools/run").write_text("exit 0\n")
    return create_output(ws, base, path, text)


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("include.path", "../.gitconfig.local", ".gitconfig.local"),
        ("includeIf.onbranch:agent/**.path", "../.gitconfig.agent", ".gitconfig.agent"),
    ],
)
def test_a_git_config_file_an_include_names_but_git_does_not_read_now_is_protected(
    tmp_path: Path, key: str, value: str, path: str
) -> None:
    """d82d187 protects the config files ``git config --list --show-origin`` shows: only those git reads NOW. An
    include of a missing file (``include.path = ../.gitconfig.local``: the usual "local overrides, if any" line;
    git ignores a missing include) and a conditional include not active now (``includeIf "onbranch:agent/**"``,
    ``hasconfig:``, ``gitdir:`` of another checkout) show nothing, so the file stays writable; once written (or
    once the agent runs ``git checkout -b agent/x``) git reads it. Checked with git 2.39: ``.gitconfig.local``
    created afterwards with an alias ran at ``git local``; an included file setting ``core.fsmonitor = "echo
    ...; false"`` ran at ``git status`` after ``git checkout -b agent/x`` and not before. Any key there runs any
    command (host code execution at the agent's next git command). Fix: protect every path an ``include.path`` or
    ``includeIf.*.path`` value names (read from the config files themselves, or ``git config --get-regexp
    '^include(if)?\\.'`` with ``--show-origin``), present or not, active or not."""
    text = "[core]\n\tfsmonitor = \"id > /tmp/pwned; false\"\n"
    out = _create(tmp_path, [(key, value)], path, text)
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("!sh check.sh", "check.sh"),
        ("!cd tools && sh run", "tools/run"),
        ("!sh -c 'cd tools && sh run'", "tools/run"),
    ],
)
def test_a_script_a_git_alias_runs_from_its_folder_or_not_yet_there_is_protected(
    tmp_path: Path, value: str, path: str
) -> None:
    """d82d187 reads every value's words with ``shlex`` from the work tree's top and protects a word with a slash,
    or one naming a file that exists when the config is read (cached while the config files are unchanged). A
    word without a slash naming a file that does not exist YET (``alias.t = !sh check.sh``; ``core.pager = sh
    pager.sh``) is left out, and creating the file does not change the config, so it stays so; a ``cd`` in the
    command (``!cd tools && sh run``) or a shell's ``-c`` text (``!sh -c 'cd tools && sh run'``) is not followed,
    so ``tools/run`` is looked for at the top. Checked with git 2.39: ``git t`` ran a ``check.sh`` created after
    the alias was set, and both ``tools/run`` forms ran ``tools/run``. The program's ``create()``/``edit()``
    succeeds and the agent's next ``git t`` runs its text on the host. Fix: read git's shell commands with
    hookruns' reader (cd, ``-c`` text, existing or not, Unread when not understood) rather than ``shlex``
    words."""
    if path == "check.sh":
        out = _create(tmp_path, [("alias.t", value)], path, "id > /tmp/pwned\n")
    else:
        base, ws = _git_ws(tmp_path, [("alias.t", value)])
        (ws / path).write_text("exit 0\n")
        out = edit_output(ws, base, path)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ _listed_plugins: the marketplace's pluginRoot
def test_the_hooks_of_a_plugin_listed_under_a_plugin_root_are_protected(tmp_path: Path) -> None:
    """040d571 takes every folder a marketplace manifest lists by a local ``source`` as a plugin folder, resolving
    ``source`` from the marketplace's folder. The Copilot CLI (1.0.102, like Claude's format) also reads the
    manifest's ``metadata.pluginRoot``, the base of every relative source: ``"metadata": {"pluginRoot":
    "./plugins"}, "plugins": [{"name": "r", "source": "evil"}]`` is ``./plugins/evil``. Checked with the real CLI
    and a fresh ``COPILOT_HOME``: ``copilot plugin marketplace add /tmp/mk``, ``copilot plugin install r@mk`` said
    "It is loaded live from /tmp/mk/plugins/evil". boundary looks at ``./evil`` instead, so in such a marketplace
    repository the real plugin folder (a skills-only plugin, no manifest) is an ordinary folder: a program's
    ``create()`` of ``plugins/notes/hooks.json`` succeeds, and the next session of every user with the plugin runs
    its hooks on the host (host code execution; checked: a ``plugins/evil/hooks.json`` written after the install
    ran its sessionStart hook in the next ``copilot -p`` session, mock model). Fix: join ``metadata.pluginRoot`` (when a
    string) before each relative source in ``_listed_plugins``; refuse what it cannot read."""
    listed = {"name": "mk", "owner": {"name": "me"}, "metadata": {"pluginRoot": "./plugins"},
              "plugins": [{"name": "notes", "source": "notes"}]}
    out = listed_plugin_hooks(tmp_path, listed)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ the user's own hooks, inline in settings.json
def test_a_repository_script_a_users_settings_hook_runs_is_protected(tmp_path: Path) -> None:
    """040d571 reads the user's own hooks files (``$COPILOT_HOME/hooks/**/*.json``), which the CLI runs in every
    session's folder, and protects the workspace scripts they name. The CLI also runs the inline ``hooks`` of the
    user's ``$COPILOT_HOME/settings.json`` (as it does a repository's ``.github/copilot/settings.json``): checked
    with the real CLI 1.0.102 and the mock model, ``{"hooks": {"sessionStart": [{"type": "command", "bash": "sh
    scripts/x.sh"}]}}`` in ``$COPILOT_HOME/settings.json`` ran the REPOSITORY's ``scripts/x.sh`` in a ``copilot -p``
    session started there (``config.json``'s and ``~/.claude/settings.json``'s were not run). A company's
    user-level policy hook written that way (``[ -f scripts/policy.sh ] && bash scripts/policy.sh``) leaves the
    script writable: ``edit()`` succeeds and the next tool call runs the program's text on the host (host code
    execution). Fix: read ``$COPILOT_HOME/settings*.json``'s inline ``hooks`` with ``user_hooks_files`` (the same
    reading as the repository's settings files), the workspace's top as their folder."""
    import json

    base, ws = policy_workspace(tmp_path)
    home = base / "home/.copilot"
    home.mkdir(parents=True)
    entry = {"type": "command", "bash": "[ ! -f scripts/policy.sh ] || bash scripts/policy.sh"}
    (home / "settings.json").write_text(json.dumps({"hooks": {"preToolUse": [entry]}}))
    out = edit_output(ws, base, "scripts/policy.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 0d0497a: a git config value hookruns cannot read
@pytest.mark.parametrize(
    "value",
    [
        "!cd tools && find . -name run | xargs sh",
        "!cd tools && xargs -a list sh",
        "!cd tools; for f in $(ls); do [ \"$f\" = run ] && sh $f; done; true",
    ],
)
def test_a_script_a_git_config_command_runs_that_hookruns_does_not_read_is_protected(
    tmp_path: Path, value: str
) -> None:
    """0d0497a reads each git config value as a hook's ``bash`` command; where hookruns says Unread (``xargs``,
    ``find -exec``, a loop over ``$(...)``, a pipe into a shell) it falls back to the value's words holding a
    slash -- so that "a user's alias piping into xargs must not refuse every write". A value that changes folder
    first names no such word: ``alias.w = !cd tools && find . -name run | xargs sh`` (or ``xargs -a list sh``, a
    loop over ``$(ls)``) protects nothing, and ``tools/run`` stays writable. Checked with git 2.39: ``git w``
    ran ``tools/run`` for each of the three. A repository set-up line (``git config alias.lint '!cd tools && ...'``)
    puts such a value in ``.git/config``; the program's ``edit()`` succeeds and the agent's next ``git w`` runs its
    text on the host (host code execution). Fix: where a value of the work tree's own config (``.git/config``,
    ``config.worktree``, a file included from the work tree) is Unread, fail closed as hooks files do (refuse the
    writes below each folder it changes to, or the whole tree); keep the fallback for the user's global config."""
    base, ws = _git_ws(tmp_path, [("alias.w", value)])
    (ws / "tools/run").write_text("exit 0\n")
    (ws / "tools/list").write_text("run\n")
    out = edit_output(ws, base, "tools/run")
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize("words", [1, 12000])
def test_a_long_git_config_value_does_not_break_every_run(tmp_path: Path, words: int) -> None:
    """0d0497a reads every git config value as a ``bash`` command with hookruns, which raises Unread past 16 KiB
    of command or 10,000 words; its fallback (the value's words with a slash) reads the same value again with
    ``shell_words`` and a fresh ``targets_in``, which raise Unread too, uncaught. ``_git_runs`` runs for the
    workspace's own check at the start of every run, so a repository whose git config (``.git/config``, the
    user's ``~/.gitconfig``, or an in-tree file ``include.path`` names, which a pull request edits) holds one long
    alias makes EVERY run -- ``print(1)`` included -- end in a bare ``codeact.core.hookruns.Unread`` traceback.
    Checked: ``git config alias.big '!xargs sh a/0 a/1 ... a/11999'`` then ``python -m codeact run --code
    'print(1)' --json``: a traceback, no JSON envelope (no silent wrong answer / no bare traceback; every run of
    the repository refused). Fix: catch Unread/Stopped around the fallback too, and say so in the refusal of a
    write (fail closed for the work tree's own config, as hooks files are), never at the run's start."""
    value = "!xargs sh " + (" ".join(f"a/{i}" for i in range(words)) if words > 1 else "a/" + "x" * 20000)
    base, ws = _git_ws(tmp_path, [("alias.big", value)])
    out = _run(ws, base / "home", "print(1)")
    assert out.split() == ["1"], out


# ------------------------------------------------------------ a user's installed plugin's hooks
_POLICY = {"type": "command", "bash": 'bash "$CLAUDE_PROJECT_DIR/scripts/policy.sh"'}  # a company's policy hook


def _policy_marketplace(base: Path, hooks: str = "hooks.json") -> str:
    """A local marketplace ``base / "mk"`` listing the plugin ``policy`` (``plugins/policy``), whose hooks file
    ``hooks`` (named by its manifest where not ``hooks.json``) runs :data:`_POLICY`: the settings (JSON text) that
    add the marketplace and enable the plugin."""
    import json

    market = base / "mk"
    (market / ".github/plugin").mkdir(parents=True)
    (market / "plugins/policy" / hooks).parent.mkdir(parents=True, exist_ok=True)
    listed = {"name": "mk", "owner": {"name": "me"}, "plugins": [{"name": "policy", "source": "./plugins/policy"}]}
    (market / ".github/plugin/marketplace.json").write_text(json.dumps(listed))
    manifest = {"name": "policy"} if hooks == "hooks.json" else {"name": "policy", "hooks": f"./{hooks}"}
    (market / "plugins/policy/plugin.json").write_text(json.dumps(manifest))
    (market / "plugins/policy" / hooks).write_text(hooks_json(_POLICY))
    settings = {"extraKnownMarketplaces": {"mk": {"source": {"source": "directory", "path": str(market)}}},
                "enabledPlugins": {"policy@mk": True}}
    return json.dumps(settings)


def test_a_repository_script_a_users_installed_plugins_hook_runs_is_protected(tmp_path: Path) -> None:
    """040d571/8ec4c1c read the user's own hooks files and settings, run in the session's folder. A plugin the
    user installed runs its hooks from its own folder (outside the workspace), but with ``$CLAUDE_PROJECT_DIR``
    and ``$COPILOT_PROJECT_DIR`` set to the session's folder -- and a plugin's hook naming the project's own
    script through them (``bash "$CLAUDE_PROJECT_DIR/scripts/policy.sh"``: a company policy plugin calling each
    repository's check) runs the REPOSITORY's file. Checked with the real CLI 1.0.102 and the mock model: a local
    marketplace's plugin (``extraKnownMarketplaces`` + ``enabledPlugins`` in ``$COPILOT_HOME/settings.json``, as
    ``copilot plugin install`` writes them) printed ``CLAUDE_PROJECT_DIR=/tmp/uh2`` and ran
    ``/tmp/uh2/scripts/policy.sh`` at sessionStart. boundary reads the hooks of plugins inside the workspace only:
    ``scripts/policy.sh`` stays writable, ``edit()`` succeeds and the next tool call runs the program's text on
    the host (host code execution). Fix: read the hooks of the user's enabled plugins (the folders
    ``enabledPlugins`` and the marketplaces in ``$COPILOT_HOME/settings.json`` and ``installed-plugins/`` name)
    with ``$CLAUDE_PROJECT_DIR``/``$COPILOT_PROJECT_DIR`` read as the workspace, as the user's own hooks are."""
    base, ws = policy_workspace(tmp_path)
    (base / "home/.copilot").mkdir(parents=True)
    (base / "home/.copilot/settings.json").write_text(_policy_marketplace(base))
    out = edit_output(ws, base, "scripts/policy.sh")
    assert out.split() == ["PermissionError"], out


def test_a_repository_script_a_users_plugins_manifest_named_hooks_file_runs_is_protected(tmp_path: Path) -> None:
    """5f4fd3e reads the user's enabled plugins' ``hooks.json``, ``hooks/hooks.json`` and their manifests' INLINE
    ``hooks``, but not the hooks file a manifest names (``"hooks": "./config/hooks.json"``), which the CLI runs
    (boundary's own ``_PLUGIN_KEYS`` reads that key for a plugin in the workspace). Checked with the real CLI
    1.0.102 and the mock model: a local marketplace's enabled plugin whose ``plugin.json`` says ``"hooks":
    "./config/hooks.json"``, holding ``bash "$CLAUDE_PROJECT_DIR/scripts/policy.sh"``, ran the session folder's
    ``scripts/policy.sh`` at sessionStart. The script stays writable: ``edit()`` succeeds and the next tool call
    runs the program's text on the host (host code execution). Fix: follow the manifest's ``hooks`` (a path, or a
    list of them) in ``_user_plugin_hooks`` as ``_plugin_rule`` does."""
    base, ws = policy_workspace(tmp_path)
    (base / "home/.copilot").mkdir(parents=True)
    (base / "home/.copilot/settings.json").write_text(_policy_marketplace(base, "config/hooks.json"))
    out = edit_output(ws, base, "scripts/policy.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 23cbcb9: web_fetch's HTML reading, memory
_RSS = """\
import resource, sys
from codeact.tools.html_text import html_to_text
page = "ab<br>" * ((4 << 20) // 6)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = html_to_text(page, "")
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10)
"""


def test_web_fetchs_html_reading_holds_a_bounded_multiple_of_the_page() -> None:
    """23cbcb9 makes ``html_to_text`` linear in TIME, but its reader keeps every piece it writes as a list item
    (each text run, each ``\\n`` of a ``<br>``, each ``](url)``): a page of ``ab<br>`` repeated (4 MiB) grows the
    host process by 87-108 MiB (measured, ru_maxrss, this test's script), 22-27 times the page; web_fetch reads up
    to 10 MiB of body (docs/tool-limits.md's only memory bound for it), so one call holds ~230-270 MiB in the host (the
    warm server, which every run shares) -- past the run's default 256 MiB memory limit and whatever lower
    ``CODEACT_MEMORY`` the user set, which the call never consults (``edit`` refuses a file over a quarter of that
    limit for the same reason). A program calling it from several concurrent runs, or a page fetched on the
    user's behalf, makes the server's memory a multiple of it (limits: an innocent concurrent run harmed). Fix:
    join the reader's pieces as it goes (a bounded list, or an ``io.StringIO``), and refuse (or cut, with a note)
    a page whose text would pass a share of the run's memory limit. Fixed: the reader joins what it writes as it
    goes, and web_fetch reads a page's text up to 1/64 of the run's memory limit, said in the result when cut."""
    import sys

    done = subprocess.run([sys.executable, "-c", _RSS], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "runtime")})
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) <= 32, f"{done.stdout.strip()} MiB held for a 4 MiB page"


def test_a_script_an_unread_git_command_of_a_linked_worktree_runs_is_protected(tmp_path: Path) -> None:
    """47a7633 fails closed on a git config value hookruns cannot read only where the value's config file lies
    INSIDE the work tree (``file.is_relative_to(tree)``); elsewhere it is "the user's own" and only its slash words
    are protected. A linked worktree (``git worktree add ../ws``: how agents and reviewers often get a checkout of
    their own) has a ``.git`` FILE, and its repository config -- the same ``.git/config`` the main checkout set up,
    ``alias.w = !cd tools && find . -name run | xargs sh`` -- lies in the main repository, outside the worktree: so
    the fallback applies and ``tools/run`` stays writable (a submodule's ``.git/modules/x/config`` likewise).
    Checked with git 2.39: ``git w`` run in the linked worktree ran its ``tools/run``. The program's ``edit()``
    succeeds and the agent's next ``git w`` runs its text on the host (host code execution). Fix: take as the work
    tree's own every config file of its repository (``git rev-parse --git-common-dir``/``--git-dir``: ``config``,
    ``config.worktree``) and the files they include, wherever they lie; the user's global and system files only
    are the user's."""
    base = tmp_path.resolve()
    main = base / "main"
    (main / "tools").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(main)], check=True, capture_output=True)
    (main / "tools/run").write_text("exit 0\n")
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
           "PATH": "/usr/bin:/bin"}
    for args in (["add", "-A"], ["commit", "-qm", "x"], ["config", "alias.w", "!cd tools && find . -name run | xargs sh"],
                 ["worktree", "add", "-q", str(base / "ws")]):
        subprocess.run(["git", "-C", str(main), *args], check=True, capture_output=True, env=env)
    out = edit_output(base / "ws", base, "tools/run")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ hookruns: a virtual environment's start-up files
@pytest.mark.parametrize("command", [".venv/bin/python scripts/check.py", "uv run scripts/check.py"])
@pytest.mark.parametrize("name", ["evil.pth", "sitecustomize.py"])
def test_a_start_up_file_of_the_virtual_environment_a_hook_runs_is_protected(
    tmp_path: Path, command: str, name: str
) -> None:
    """docs/security.md covers, for any Python start a hook makes, ``sitecustomize.py`` and ``usercustomize.py``
    in each folder of ``PYTHONPATH`` -- but not the site-packages of the interpreter the hook runs when that is
    the repository's own virtual environment (``.venv/bin/python scripts/check.py``, ``uv run ...`` and
    ``poetry run ...``, which use the project's ``.venv``): every ``*.pth`` file there is read at start-up and its
    ``import`` lines run, and ``sitecustomize.py`` there is imported. Checked with Python 3.11: a venv's
    ``site-packages/x.pth`` holding ``import os; os.system("echo PTH-RAN")`` printed at ``.venv/bin/python -c
    pass``. boundary protects ``.venv/bin/python`` (a word with a slash) but not the folder: a program's
    ``create()`` of ``.venv/lib/python3.11/site-packages/evil.pth`` succeeds and the CLI runs its code at the next
    tool call (host code execution). ``node_modules`` is protected whole for the same reason (npx). Fix: protect
    a virtual environment's site-packages (a folder with ``pyvenv.cfg`` at any depth: ``lib/*/site-packages``,
    ``Lib/site-packages``) in a workspace whose hooks run Python from it -- or simply every ``.venv``/``venv``
    folder holding ``pyvenv.cfg``, like ``node_modules``."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": command}],
                                ".venv/lib/python3.11/site-packages", ".venv/bin", "scripts")
    (ws / ".venv/pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n")
    (ws / ".venv/bin/python").write_text("")
    (ws / "scripts/check.py").write_text("pass\n")
    path = f".venv/lib/python3.11/site-packages/{name}"
    out = create_output(ws, base, path, "import os; os.system('id > /tmp/pwned')\n")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 5592cf0: a glob segment with braces backtracks
_BRACED = "*a" * 14 + "*{b,c}"  # a segment holding {a,b} "is matched as written": [^/]*a[^/]*a...(?:b|c)
_BRACED_FORMS = {
    "a repository's .gitignore rule, glob(pattern='*/*')": ("print(glob(pattern='*/*'))\n", True),
    "outline(path=<a file>, glob=...)": (f"print(outline(path='src/{'a' * 60}', glob='{_BRACED}'))\n", False),
    "grep(path=<a file>, glob=...)": (f"print(grep(pattern='x', path='src/{'a' * 60}', glob='{_BRACED}'))\n", False),
}


@pytest.mark.parametrize("form", sorted(_BRACED_FORMS))
def test_a_braced_glob_that_backtracks_is_matched_within_the_run_deadline(tmp_path: Path, form: str) -> None:
    """5592cf0 translates globs so that they cannot backtrack, except "a segment holding ``{a,b}`` is matched as
    written": each ``*`` there is still ``[^/]*``, so ``*a*a*a*a*a*a*a*a*a*a*a*a*a*a*{b,c}`` against a name of 60
    ``a`` is round 14's catastrophic case again (checked: ``re.fullmatch(translate_glob(that), "a" * 40)`` had
    not ended after 10 s; 60 characters: hours), in C, the interpreter held, no deadline. A program reaches it
    with ``grep(path=<file>, glob=...)``/``outline(path=<file>, glob=...)`` (ripgrep's globs take braces); a
    committed ``.gitignore`` line too (checked: all three forms below, a run of 2 s not ended after 20 s; for
    ``.gitignore``, where braces are not even special, the model's innocent ``glob(pattern="*/*")``). Through the warm
    server the client then kills the server and any concurrent run with it (round 14's test shows the chain).
    Fix: expand a segment's braces into alternatives each translated atomically (bounded: braces past a count
    refused), or match such a glob in the regex worker the deadline kills. Fixed: a glob with braces is expanded into
    the brace-free globs it stands for (at most 256), each translated so that it cannot backtrack."""
    from test_attacks_round14_limits import MiB, _host_run

    code, gitignore = _BRACED_FORMS[form]
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / "src" / ("a" * 60)).write_text("x\n")
    (ws / "src" / "main.py").write_text("x = 1\n")
    if gitignore:
        (ws / ".gitignore").write_text(_BRACED + "\n")
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, wait=20)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


def test_a_repository_script_a_plugin_the_repositorys_settings_enable_runs_is_protected(tmp_path: Path) -> None:
    """5f4fd3e reads the hooks of the plugins the USER enabled (``$COPILOT_HOME/settings.json``'s
    ``extraKnownMarketplaces``/``enabledPlugins``, ``installed-plugins/``). The repository's own
    ``.github/copilot/settings.json`` takes the same keys, and the CLI loads what it enables with no install and a
    fresh ``COPILOT_HOME``: checked with the real CLI 1.0.102 and the mock model, a repository whose settings name
    a marketplace folder OUTSIDE it (``"path": "/tmp/mk"``: a company's plugins checked out beside the
    repositories) and enable ``r@mk`` ran that plugin's hook ``bash "$CLAUDE_PROJECT_DIR/scripts/policy.sh"`` --
    the repository's script -- at sessionStart, no ``$COPILOT_HOME/settings.json`` present. The plugin's folder is
    outside the workspace (so not read as one of its plugins) and not the user's: ``scripts/policy.sh`` stays
    writable, ``edit()`` succeeds and the next tool call runs the program's text on the host (host code
    execution). Fix: read ``enabledPlugins``/``extraKnownMarketplaces`` of the repository's settings files
    (``.github/copilot/settings*.json``, ``.claude/settings*.json``) as the user's are, their hooks read on the
    workspace."""
    base, ws = policy_workspace(tmp_path, ".github/copilot")
    (ws / ".github/copilot/settings.json").write_text(_policy_marketplace(base))
    out = edit_output(ws, base, "scripts/policy.sh")
    assert out.split() == ["PermissionError"], out


def test_a_repository_script_an_installed_plugin_with_a_github_manifest_runs_is_protected(tmp_path: Path) -> None:
    """5f4fd3e finds the copies under ``$COPILOT_HOME/installed-plugins/`` by a ``plugin.json`` or ``hooks.json``
    file, or a ``.plugin``, ``.claude-plugin`` or ``hooks`` folder -- not by ``.github/plugin/plugin.json``, one of
    the four manifests the CLI reads (boundary's own ``_PLUGIN_MANIFESTS``), whose inline ``hooks`` it then never
    reads. Checked with the real CLI 1.0.102 and the mock model: a plugin holding only
    ``.github/plugin/plugin.json`` with an inline sessionStart hook ``bash "$CLAUDE_PROJECT_DIR/scripts/policy.sh"``
    ran the session folder's script. Installed from a remote marketplace (the copy under ``installed-plugins/``),
    such a plugin leaves ``scripts/policy.sh`` writable: ``edit()`` succeeds and the next tool call runs the
    program's text on the host (host code execution). Fix: detect a plugin copy by any of ``_PLUGIN_MANIFESTS``
    (``.github`` among the folders looked at)."""
    import json

    base, ws = policy_workspace(tmp_path)
    copy = base / "home/.copilot/installed-plugins/mk/policy"
    (copy / ".github/plugin").mkdir(parents=True)
    (copy / ".github/plugin/plugin.json").write_text(json.dumps({"name": "policy", "hooks": {"preToolUse": [_POLICY]}}))
    out = edit_output(ws, base, "scripts/policy.sh")
    assert out.split() == ["PermissionError"], out
