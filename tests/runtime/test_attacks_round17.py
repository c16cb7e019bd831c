"""Red team, round 17 (issue 40; report-only): attacks on round 16's fixes (a5828a7, 3969470, 9abd0ec, 485dcce,
aba35c2, 463c084) and their neighbours. Each test runs a program through the sandbox (``run``, monty) and fails
while the finding is open (strict xfail); a false positive is a test that the ordinary write succeeds. Every
breach was checked with the real tool on this Linux machine (bash 5.2, mawk 1.3, GNU sed 4.9, GNU make 4.3, ed,
sqlite3, vim, ripgrep 14.1, git 2.39, npm/npx 11.19 and node-gyp 12.4 offline, pnpm 9.15, yarn 1.22, pip 23.2,
cargo 1.95, Maven 3.8): the tool ran the file the program wrote."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round12_redteam import _edit_hook_target

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_REASON = "open (issue 40, red team round 17): {}"


# ------------------------------------------------------------ a5828a7: awk's and sed's programs that run commands
_FILTER_RUNS = {  # a text filter whose program runs a command built from what it reads, in a form _AWK_RUNS or
    # _SED_RUNS misses
    "awk print | a variable": "find impl -name run.sh | awk '{c=\"bash \" $0; print \"\" | c}'",
    "awk printf | (an expression)": "find impl -name run.sh | awk '{printf \"\" | (\"bash \" $0)}'",
    "sed e with a line address": "find impl -name run.sh | sed 's/^/bash /;1e'",
    "sed e with the last-line address": "find impl -name run.sh | sed -e 's/^/bash /' -e '$e'",
    "sed s///e with another delimiter": "find impl -name run.sh | sed 's%^%bash %e'",
    "awk -f a here-document": "find impl -name run.sh | awk -f /dev/fd/3 3<<EOF\n{system(\"bash \" \\$0)}\nEOF",
}


@pytest.mark.parametrize("form", sorted(_FILTER_RUNS))
def test_a_hook_script_a_text_filter_runs_in_another_spelling_is_protected(tmp_path: Path, form: str) -> None:
    """a5828a7 reads an awk or sed program as one that runs commands by two regular expressions. ``_AWK_RUNS`` wants
    a quote after awk's ``|`` (``print | "cmd"``), but the command after ``|`` is any expression: ``print "" | c``
    with ``c="bash " $0``, or ``printf "" | ("bash " $0)``. ``_SED_RUNS`` wants sed's ``e`` command at a command's
    start, but a command may carry an address (``1e``, ``$e``, ``/re/e`` aside), and the ``s`` command's delimiter
    may be any character, not only ``/|#,:@!`` (``s%^%bash %e``). Each form, as a hook of the repository, ran the
    program's ``impl/run.sh`` with the real mawk and GNU sed (``find impl -name run.sh | sed 's/^/bash /;1e'``
    printed the planted text's output), while ``edit()`` of ``impl/run.sh`` succeeds. And the program may come
    from a here-document (``awk -f /dev/fd/3 3<<EOF``): it is in no word after awk, so ``_AWK_RUNS`` does not
    see it (it ran ``impl/run.sh`` too; sed's here-document form is caught today). Suggested fix: read any awk
    program holding ``system``, ``getline`` or a ``|`` outside a string/regex as one that runs commands (or simply
    any ``|`` not inside a ``"..."`` literal); read a sed script as running commands where any ``e`` is a command
    after an optional address (``[0-9$,~!]*``, ``/re/``) or is a flag of an ``s`` command whatever its delimiter
    (parse ``s`` with its delimiter, or fail closed on an ``e`` among the final flag letters of any word).
    Fixed: awk's and sed's own program is parsed (``hookruns._filter_program``): any ``system(``, ``|`` or ``@``
    outside awk's strings, regexes and comments, any sed ``e`` command or ``s///e`` flag; ``-f`` from a descriptor fails closed."""
    out = _edit_hook_target(tmp_path, {"bash": _FILTER_RUNS[form]}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


_PIPED_INTERPRETERS = {  # a command that reads the commands it runs from the pipe, not in _RUNS_CODE
    "make -f -": "find impl -name run.sh | sed 's/^/all:;@bash /' | make -s -f -",
    "ed": "find impl -name run.sh | sed 's/^/!bash /' | ed -s",
    "sqlite3": "find impl -name run.sh | sed 's/^/.shell bash /' | sqlite3",
    "vim -es": "find impl -name run.sh | sed 's/^/!bash /' | vim -es -u NONE",
}


@pytest.mark.parametrize("form", sorted(_PIPED_INTERPRETERS))
def test_a_hook_script_piped_into_another_command_interpreter_is_protected(tmp_path: Path, form: str) -> None:
    """The neighbour of a5828a7: a pipe into a shell (``| sh``), python, perl, node, tclsh... makes the hooks file
    Unread (``_RUNS_CODE``), but other common programs run the commands they read on stdin: ``make -f -`` runs a
    Makefile read from the pipe (``all:;@bash impl/run.sh``), ``ed`` and ``vim -es``/``ex -s`` run ``!cmd``,
    sqlite3's shell runs ``.shell cmd`` (``.system``). Each ran the program's ``impl/run.sh`` on this machine
    (GNU make 4.3, ed 1.19, vim 9, sqlite3 3.40) while ``edit()`` succeeds. Suggested fix: add ``ed``, ``ex``,
    ``vi``/``vim``/``nvim`` (``-e``/``-es``), ``sqlite3``, ``gdb``, ``make -f -`` (a ``-f`` value of ``-`` or
    ``/dev/stdin``), ``m4``, ``dc`` to the commands that run what a pipe feeds them (fail closed on the pipe).
    Fixed: a pipe into one of ``hookruns._STDIN_RUNNERS`` or make reading ``-f -`` makes the hooks file Unread."""
    out = _edit_hook_target(tmp_path, {"bash": _PIPED_INTERPRETERS[form]}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


_ORDINARY_FILTERS = {  # ordinary log and format hooks with no command in their awk program
    "awk prints a literal |": "jq -r .toolName | awk '{print $1 \"|\" $2}' >> log.txt",
    "awk sets FS to |": "jq -r .toolName | awk 'BEGIN{FS=\"|\"} {print $1}' >> log.txt",
    "a later jq program's | \"...\"": "awk '{print $1}' log.txt | jq -R '. | \"x\"' > /dev/null",
}


@pytest.mark.parametrize("form", sorted(_ORDINARY_FILTERS))
def test_an_awk_filter_with_a_literal_bar_leaves_the_repository_writable(tmp_path: Path, form: str) -> None:
    """False positive of a5828a7: ``_AWK_RUNS`` matches ``|"`` anywhere in the words after ``awk``, so the string
    literal ``"|"`` (``print $1 "|" $2``, ``BEGIN{FS="|"}``), or a LATER command's program in the same pipeline
    (jq's ``'. | "x"'``, its string interpolation idiom), reads as ``print | "cmd"``: the hooks file becomes one past
    what CodeAct reads and every write of the workspace is refused (here ``notes.md``, which nothing names). Real
    awk runs no command for these programs. Suggested fix: search only awk's own program word (the first word
    after its options, or ``-f``'s file), and skip string literals before looking for ``|``.
    Fixed: only awk's own program word is read, its strings and regular expressions left out."""
    out = _edit_hook_target(tmp_path, {"bash": _ORDINARY_FILTERS[form]}, "notes.md")
    assert out.split() != ["PermissionError"], out


_SPACED_SCRIPTS = {  # sed scripts holding spaces, under keys also read as PowerShell's words (split on spaces)
    "command: s/ *$//": ("command", "jq -r .prompt | sed 's/ *$//; s/^ *//' >> log.txt"),
    "command: a quoted \\(...\\)": ("command", "sed -n 's/.*\"file_path\": *\"\\([^\"]*\\)\".*/\\1/p' > last.txt"),
    "powershell: -e 's/a b/c/'": ("powershell", "sed -e 's/a b/c/' -e 's/x/y/g' log.txt"),
}


@pytest.mark.parametrize("form", sorted(_SPACED_SCRIPTS))
def test_a_sed_script_with_spaces_leaves_the_repository_writable(tmp_path: Path, form: str) -> None:
    """The fixer's own check of the strict sed reading (a script it does not parse counts as one that runs a
    command): a ``command`` or ``powershell`` entry is read as PowerShell's words too, split on white space, which
    cut ``s/ *$//`` apart. Those pieces are read leniently (only an ``e`` read counts), the POSIX shell's words
    strictly, so these ordinary scripts refuse no write."""
    key, command = _SPACED_SCRIPTS[form]
    out = _edit_hook_target(tmp_path, {key: command}, "notes.md")
    assert out.split() != ["PermissionError"], out


_PIPED_SCRIPTS = {  # a hook that pipes the CLI's JSON into an interpreter running a named script file
    "python3 script": "jq -c . | python3 .github/hooks/guard.py",
    "bash script": "jq -c . | bash .github/hooks/guard.sh",
    "node script": "tee -a .github/hooks/calls.jsonl | node .github/hooks/guard.js",
}


@pytest.mark.parametrize("form", sorted(_PIPED_SCRIPTS))
def test_a_pipe_into_an_interpreter_running_a_named_script_leaves_the_repository_writable(tmp_path: Path,
                                                                                          form: str) -> None:
    """False positive (8535f9a's pipe rule, widened to ``_RUNS_CODE``): ``jq -c . | python3 .github/hooks/guard.py``
    makes the hooks file one past what CodeAct reads ("a command piped into python3 runs what CodeAct does not
    read"), so every write of the workspace is refused. But an interpreter given a script file runs that file, and
    the pipe is only its stdin (the hook's JSON): python3, bash, node run ``guard.*`` (already protected, it is
    named) and read no code from the pipe. Suggested fix: fail closed on a pipe into an interpreter only when it
    reads its program from stdin (no script operand, or ``-``, ``/dev/stdin``, ``-s``); with a script operand, read
    the script as the hook's file, as without the pipe.
    Fixed: ``hookruns._reads_code`` reads a shell's, python's or node's options; a script operand reads the pipe as data."""
    out = _edit_hook_target(tmp_path, {"bash": _PIPED_SCRIPTS[form]}, "notes.md")
    assert out.split() != ["PermissionError"], out


# ------------------------------------------------------------ 3969470: an install runs every workspace's scripts
_INSTALL_FORMS = {  # npm commands that reify the tree (running workspace lifecycle scripts) not read as installs
    "npm --silent install (an option first)": "npm --silent install",
    "npm --prefer-offline install": "npm --prefer-offline install",
    "npm dedupe": "npm dedupe",
    "npm prune": "npm prune",
    "npm uninstall": "npm uninstall left-pad",
    "pnpm --silent install": "pnpm --silent install",
    "yarn (bare: an install)": "yarn",
    "yarn --frozen-lockfile": "yarn --frozen-lockfile",
}


@pytest.mark.parametrize("form", sorted(_INSTALL_FORMS))
def test_a_workspace_package_json_every_reifying_npm_command_runs_is_protected(tmp_path: Path, form: str) -> None:
    """3969470 reads an npm command as an install (every ``package.json`` below protected) only when the install
    word is the FIRST word of ``_options``' result, but ``_options`` records options too: with any option before
    the command (``npm --silent install``, ``npm -s ci``, ``npm --prefer-offline install``) ``found`` is not empty
    and only the top ``package.json`` is protected. And ``_INSTALLS`` lacks npm's other commands that reify the
    tree: ``dedupe`` (``ddp``), ``prune``, ``uninstall`` (``rm``, ``r``, ``un``, ``remove``, ``unlink``), ``audit
    fix``, ``find-dupes`` aside. With ``"workspaces": ["packages/*"]`` each of ``npm --silent install``, ``npm
    --prefer-offline install``, ``npm dedupe``, ``npm prune``, ``npm uninstall nothing`` ran
    ``packages/a/package.json``'s ``postinstall`` (npm 11.19, offline, a fresh clone without ``node_modules``;
    ``npm -s ci`` too, with a lockfile), and here, with ``"workspaces": ["impl"]``, ``edit()`` of
    ``impl/package.json`` succeeds. Suggested fix: look for the subcommand past options (as
    ``_subcommand`` does, skipping npm's valued options), and treat every npm subcommand that is not known to run
    no lifecycle script as an install (fail closed: a list of the read-only ones — ``run``, ``view``, ``ls``,
    ``pkg``, ``exec`` — instead of a list of installs). Bare ``yarn`` is yarn's install, and ``yarn
    --frozen-lockfile`` and ``pnpm --silent install`` hit the same first-word check: each ran ``impl``'s
    ``postinstall`` (yarn 1.22.22 with ``"workspaces": ["impl"]``, pnpm 9.15 with ``pnpm-workspace.yaml``,
    offline).
    Fixed: ``_options`` finds the command past npm's options as nopt reads them, and every npm command but those
    known to reify nothing (``_NPM_READS``) is an install; bare ``yarn`` and pnpm's, yarn's removes are too."""
    out = _edit_hook_target(tmp_path, {"bash": _INSTALL_FORMS[form]}, "impl/package.json")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ aba35c2: npx's folder specs
_NPX_FORMS = {  # npx specs npm reads as a folder (npm-package-arg), not read so by _package_folders
    "npx name@./folder": "npx --yes impl@./impl",
    "npx name@file:folder": "npx --yes x@file:impl",
    "npx --package name@./folder": "npx --yes --package x@./impl impl",
    "npx --loglevel error ./folder": "npx --yes --loglevel error ./impl",
    "npm exec --loglevel error -- ./folder": "npm exec --yes --loglevel error -- ./impl",
    "npm --loglevel error exec -- ./folder": "npm --loglevel error exec --yes -- ./impl",
}


@pytest.mark.parametrize("form", sorted(_NPX_FORMS))
def test_a_package_folder_npx_runs_by_an_aliased_spec_or_after_a_valued_option_is_protected(tmp_path: Path,
                                                                                             form: str) -> None:
    """aba35c2 reads ``file:x``, ``./x``, ``x/`` and ``$VAR/x`` as a folder spec, but npm-package-arg splits
    ``name@spec`` first: ``impl@./impl``, ``x@file:impl`` (and ``--package x@./impl``) are folder specs too. And
    ``_package_folders`` takes the first word that is no option as the spec, so an option's VALUE
    (``--loglevel error``, ``--cache dir``, ``--registry url``) is taken for it and the real spec after it is never
    read; likewise ``_subcommand`` takes ``npm --loglevel error exec``'s ``error`` for the command, so the ``exec``
    is not seen at all. Each ran ``impl``'s ``bin`` (npx 11.19 offline: ``RAN-IMPL-BIN``), while ``edit()`` of
    ``impl/package.json`` succeeds. Suggested fix: strip a ``name@`` before a spec (the last ``@`` not at the
    start), read ``FILE:`` case-insensitively (npm-package-arg's ``/^file:/i``), and skip npm's valued options
    (``--loglevel``, ``--cache``, ``--registry``, ``--userconfig``, ``--prefix``, ... or any ``--x`` followed by
    a word when that word is no folder spec) or read every word up to ``--``/the command as a possible spec.
    Fixed: ``_package_folders`` skips npm's valued options with their values (nopt's reading of npm 11's config)
    and reads each spec as npm-package-arg does (``_folder_spec``: ``name@spec``, ``FILE:``)."""
    out = _edit_hook_target(tmp_path, {"bash": _NPX_FORMS[form]}, "impl/package.json")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 3969470's neighbours: what else an install runs
@pytest.mark.parametrize(("command", "target"), [("npm ci", "binding.gyp"), ("npm install", "impl/binding.gyp")])
def test_a_binding_gyp_an_install_runs_is_protected(tmp_path: Path, command: str, target: str) -> None:
    """npm gives a package with a ``binding.gyp`` and no ``install``/``preinstall`` script the default install
    script ``node-gyp rebuild``, for the project's root as for a workspace package; gyp runs every ``<!(cmd)``
    command expansion of the file while it reads it. With ``binding.gyp`` holding ``{"variables": {"x": "<!(sh -c
    'echo PWNED > /tmp/pwned')"}}`` a plain ``npm ci`` (and ``npm install`` for ``impl/binding.gyp`` in the
    workspace ``impl``) ran the command on this machine (npm 11.19, node-gyp 12.4, offline: the command ran before
    node-gyp failed for lack of headers). The boundary protects ``package.json`` for any npm command, but
    ``binding.gyp`` beside it stays writable (created or edited). Suggested fix: for every npm/pnpm/yarn/bun
    install (and ``rebuild``), protect ``binding.gyp`` beside each ``package.json`` it protects (npm's
    ``gypfile``), as the lifecycle scripts' own files.
    Fixed: an install protects ``binding.gyp``, ``config.gypi`` and ``common.gypi`` beside each ``package.json``
    it protects (``_INSTALL_FILES``)."""
    out = _edit_hook_target(tmp_path, {"bash": command}, target)
    assert out.split() == ["PermissionError"], out


_LOCK = """{
  "name": "x",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "x", "dependencies": {"left-pad": "^1.3.0"}},
    "node_modules/left-pad": {
      "version": "1.3.0",
      "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
      "integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQEQhyBuXW4/9g9Ioc=="
    }
  }
}
"""


def _ascii_tar(name: str, text: str) -> str:
    """A plain (ustar) tar holding ``name`` with ``text``: ASCII only, so a program's ``create()`` writes it."""
    import io
    import tarfile

    data = text.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.uname, info.gname = len(data), 0, "", ""
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue().decode("ascii")


def test_the_lockfile_a_hooks_npm_ci_installs_from_is_protected(tmp_path: Path) -> None:
    """A hook's ``npm ci`` installs exactly what ``package-lock.json`` resolves. The program creates
    ``vendor/lp.tar`` (a plain ustar tar is ASCII, so ``create()`` writes it) holding a ``package.json`` named
    ``left-pad`` 1.3.0 with a ``postinstall``, and edits the lockfile's ``resolved`` of ``left-pad`` (a registry
    dependency of the protected ``package.json``) to ``file:vendor/lp.tar`` (``"hasInstallScript": true``, no
    ``integrity``). ``npm ci --offline`` then extracted the tar and ran its ``postinstall`` on this machine
    (npm 11.19: its allowScripts notice only warns). Both writes succeed today: neither ``package-lock.json``
    (``npm-shrinkwrap.json``, pnpm's ``pnpm-lock.yaml``, ``yarn.lock``, ``bun.lock``) nor a tarball is protected.
    Suggested fix: for every install command a hook runs, protect the lockfiles beside each ``package.json`` it
    protects (they decide what is fetched and which install scripts run), or fail closed on them.
    Fixed: an install protects the lockfiles and tarballs (``*.tgz``, ``*.tar``) of its folder and below."""
    import json
    import subprocess

    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "npm ci --silent"}]}}))
    (ws / "package.json").write_text('{"name": "x", "dependencies": {"left-pad": "^1.3.0"}}\n')
    (ws / "package-lock.json").write_text(_LOCK)
    tar = _ascii_tar("package/package.json", json.dumps({"name": "left-pad", "version": "1.3.0", "scripts": {
        "postinstall": "id > /tmp/pwned"}}))
    old = ('"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n      "integrity": '
           '"sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQEQhyBuXW4/9g9Ioc=="')
    new = '"resolved": "file:vendor/lp.tar", "hasInstallScript": true'
    code = (f"try:\n    print(create(path='vendor/lp.tar', file_text={tar!r}))\n"
            f"    print(edit(path='package-lock.json', old_str={old!r}, new_str={new!r}))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert "PermissionError" in out.split(), out


@pytest.mark.parametrize("spec", ["file:../shared", "../shared", "link:../shared", "file:../vendor/s.tgz"])
def test_a_local_dependency_outside_the_folder_a_hook_installs_in_is_protected(tmp_path: Path, spec: str) -> None:
    """Beside the lockfile finding: ``npm ci`` run in ``web`` (the entry's ``cwd``) installs ``web``'s local dependencies, and npm runs the
    lifecycle scripts of a ``file:``/relative folder dependency (or extracts a local tarball) wherever it lies:
    ``../shared`` is not below ``web``, so ``**/package.json`` of the install's folder does not cover it. Fixed:
    ``_local_dependencies`` reads the install folder's (protected) ``package.json`` for local specs and protects
    each folder's ``package.json`` (and node-gyp's files), each tarball, following the folders' own in turn."""
    import json

    from attack_helpers import edit_output, hooked_workspace

    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": "npm ci --silent",
                                                             "cwd": "web"}], "web",
                                "shared", "vendor")
    (ws / "web/package.json").write_text(json.dumps({"name": "web", "dependencies": {"shared": spec}}))
    target = "vendor/s.tgz" if spec.endswith(".tgz") else "shared/package.json"
    (ws / target).write_text("exit 0\n")
    out = edit_output(ws, base, target)
    assert out.split() == ["PermissionError"], out


def test_the_workspace_root_an_install_in_a_workspace_runs_is_protected(tmp_path: Path) -> None:
    """Beside the lockfile finding: npm run in a workspace folder (the entry's ``cwd``: ``impl``) installs from the
    workspace root above it, whose lifecycle scripts run: ``npm install --offline`` in ``a/`` of a root with
    ``"workspaces": ["a", "b"]`` ran the root's ``postinstall`` (npm 11.19, this machine), and wrote the root's
    ``package-lock.json``. Fixed: an install protects ``package.json``, its lockfiles and node-gyp's files in
    each folder up from the one it runs in."""
    from attack_helpers import edit_output, hooked_workspace

    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": "npm install", "cwd": "impl"}], "impl")
    (ws / "impl/package.json").write_text('{"name": "impl", "version": "1.0.0"}\n')
    (ws / "package.json").write_text('{"name": "x", "workspaces": ["impl"], "scripts": {"postinstall": "exit 0"}}\n')
    out = edit_output(ws, base, "package.json")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 9abd0ec: a user's hooks past what is read name nothing
@pytest.mark.parametrize("settings", [".claude", ".github/copilot"])
@pytest.mark.parametrize("command", ['cd "$CLAUDE_PROJECT_DIR" && find impl -name run.sh | xargs bash',
                                     'cd "$CLAUDE_PROJECT_DIR" && find impl -name run.sh -exec bash {} \\;'])
def test_a_repository_enabled_plugins_unread_hook_still_fails_closed(tmp_path: Path, settings: str,
                                                                     command: str) -> None:
    """9abd0ec made a user's hooks file past what CodeAct reads name nothing (so that ``cd ~/.copilot/hooks &&
    ./notify.sh`` does not refuse every write everywhere). But ``user_hooks_files`` also holds the hooks of the
    plugins the REPOSITORY's own settings enable (``.claude/settings.json`` or ``.github/copilot/settings.json``:
    ``extraKnownMarketplaces`` with a ``directory`` source inside the repository, ``enabledPlugins``), and those are
    the repository's hooks: the same ``find impl -name run.sh | xargs bash`` (or ``-exec bash {} \\;``) that
    refuses the write in ``.github/hooks/*.json`` leaves ``impl/run.sh`` writable when the repository carries it as
    its enabled plugin's ``hooks/hooks.json``. ``edit()`` succeeds; bash and xargs run the program's text at the
    next tool call (findutils 4.9, bash 5.2: ``find impl -name run.sh | xargs bash`` ran ``impl/run.sh``).
    Suggested fix: keep "names nothing" for the hooks files outside the workspace only (the user's own, their
    plugins under ``installed-plugins``); a hooks file the workspace holds, or that its own settings enable,
    fails closed as the repository's hooks do.
    Fixed: ``Workspace.enabled_hooks`` holds the hooks files the workspace's settings enable; those, and any the
    workspace holds, are a hooks file past what CodeAct reads where they are unread (``_user_hook_script``)."""
    import json
    import subprocess

    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "impl").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / settings).mkdir(parents=True)
    up = "../" * len(Path(settings).parts)
    (ws / settings / "settings.json").write_text(json.dumps({
        "extraKnownMarketplaces": {"team": {"source": {"source": "directory", "path": up + "tools/mkt"}}},
        "enabledPlugins": {"guard@team": True}}))
    (ws / "tools/mkt/.claude-plugin").mkdir(parents=True)
    (ws / "tools/mkt/.claude-plugin/marketplace.json").write_text(json.dumps({
        "name": "team", "owner": {"name": "t"}, "plugins": [{"name": "guard", "source": "./guard"}]}))
    (ws / "tools/mkt/guard/hooks").mkdir(parents=True)
    (ws / "tools/mkt/guard/hooks/hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"hooks": [{"type": "command", "command": command}]}]}}))
    (ws / "impl/run.sh").write_text("exit 0\n")
    code = ("try:\n    print(edit(path='impl/run.sh', old_str='exit 0', new_str='id'))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ a here-document's substitution, run by a shell
_HEREDOCS = {  # the here-document forms of the documented-Unread `bash $(find ...)` and `find ... | sh`
    "bash <<EOF bash $(find)": "bash <<EOF\nbash $(find impl -name run.sh)\nEOF",
    "bash <<EOF bash `find`": "bash <<EOF\nbash `find impl -name run.sh`\nEOF",
    "sh <<EOF $(find | sed)": "sh <<EOF\n$(find impl -name run.sh | sed 's/^/bash /')\nEOF",
}


@pytest.mark.parametrize("form", sorted(_HEREDOCS))
def test_a_hook_script_a_here_documents_substitution_names_is_protected(tmp_path: Path, form: str) -> None:
    """``bash $(find impl -name run.sh)`` and ``find ... | sh`` make the hooks file one past what CodeAct reads,
    and a quoted here-document's text is read as commands (``bash <<'EOF'`` / ``cd impl`` / ``./run.sh`` is
    protected). But in an UNQUOTED here-document (``<<EOF``) the shell expands ``$(...)`` and backticks before the
    shell it feeds runs the text: ``bash <<EOF`` / ``bash $(find impl -name run.sh)`` / ``EOF`` ran the program's
    ``impl/run.sh`` (bash 5.2, ``bash -c`` as the CLI runs a hook), yet the hooks file is read and
    ``impl/run.sh`` stays writable. Suggested fix: read a substitution inside an unquoted here-document (or
    here-string) like one on the command line: Unread where it is at a command's place or the script an
    interpreter runs (simplest: any ``$(``/backtick in an unquoted here-document fed to a shell or interpreter).
    Fixed: ``hookruns._check_here_documents`` fails closed on it when the command fed runs code it reads."""
    out = _edit_hook_target(tmp_path, {"bash": _HEREDOCS[form]}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


_FINDERS_THAT_RUN = {  # commands that run a program on each file they find, besides find -exec, xargs, run-parts
    "rg --pre bash": "rg --pre bash -l TODO impl",
    "git grep -O bash": "git grep -Obash -l exit -- impl",
    "git grep --open-files-in-pager=bash": "git grep --open-files-in-pager=bash -l exit -- impl",
}


@pytest.mark.parametrize("form", sorted(_FINDERS_THAT_RUN))
def test_a_hook_script_a_search_tool_runs_on_what_it_finds_is_protected(tmp_path: Path, form: str) -> None:
    """``find -exec``/``-execdir``, ``xargs``, ``run-parts`` make the hooks file one past what CodeAct reads. Two
    search tools run a command on every file they find too: ripgrep's ``--pre COMMAND`` runs ``COMMAND PATH`` for
    each file it searches (``rg --pre bash -l TODO impl`` ran ``bash impl/run.sh``: ripgrep 14.1, the runtime's
    own), and ``git grep -O<pager>`` (``--open-files-in-pager=<pager>``) runs the pager with the matching files
    (``git grep -Obash -l exit -- impl`` ran ``bash impl/run.sh``: git 2.39). ``impl`` is a folder, which stays
    writable, so ``edit()`` of ``impl/run.sh`` succeeds. Suggested fix: add ``rg --pre``/``--pre=`` and ``git grep
    -O``/``--open-files-in-pager`` to the commands that run what they find (fail closed).
    Fixed: ``hookruns._finder_runs`` makes ``rg --pre`` and ``git grep -O``/``--open-files-in-pager`` Unread."""
    out = _edit_hook_target(tmp_path, {"bash": _FINDERS_THAT_RUN[form]}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


_GENERATED = {  # a hook that writes a script outside the workspace from what it finds, then runs it
    "sed > /tmp/h.sh; bash /tmp/h.sh": "find impl -name run.sh | sed 's/^/bash /' > /tmp/h.sh; bash /tmp/h.sh",
    "find -fprintf; sh": "find impl -name run.sh -fprintf /tmp/h.sh 'bash %p\\n'; sh /tmp/h.sh",
}


@pytest.mark.parametrize("form", sorted(_GENERATED))
def test_a_hook_script_run_through_a_script_the_hook_generates_is_protected(tmp_path: Path, form: str) -> None:
    """``find impl -name run.sh | sed 's/^/bash /' | sh`` is Unread (a pipe into a shell), but the same through a
    file is not: ``... > /tmp/h.sh; bash /tmp/h.sh`` (or find's ``-fprintf /tmp/h.sh 'bash %p\\n'``) runs a
    script outside the workspace whose text the hook built from what it found, and ``bash /tmp/h.sh`` names
    nothing inside. bash ran the program's ``impl/run.sh`` (bash 5.2, GNU findutils 4.9); ``edit()`` succeeds.
    Suggested fix: a script an interpreter runs that lies outside the workspace and that the same command wrote
    (``>``/``>>``/``tee`` to it, find's ``-fprint*``), or any outside script not known to be the user's, makes
    the hooks file one past what CodeAct reads.
    Fixed: the command reader fails closed on a script it writes itself (``hookruns._written``) or in /tmp."""
    out = _edit_hook_target(tmp_path, {"bash": _GENERATED[form]}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ 3969470's Python twin: pip builds the project it installs
@pytest.mark.parametrize(("command", "target"), [("pip install -q -e .", "setup.py"),
                                                 ("pip install -q .", "pyproject.toml")])
def test_the_build_script_a_hooks_pip_install_runs_is_protected(tmp_path: Path, command: str, target: str) -> None:
    """3969470 protects every ``package.json`` an npm install runs the scripts of; pip's install of a folder
    runs the project's build the same way: ``pip install -e .`` runs ``setup.py`` (a setuptools project), and
    ``pip install .`` runs the backend ``pyproject.toml`` names, which ``backend-path = ["."]`` takes from the
    project's own folder (``build-backend = "evil_backend"`` ran ``./evil_backend.py``). Both ran the planted
    code with pip 23.2 (Python 3.11) in a venv on this machine. The hook's words (``pip install -e .``) name a folder, which
    stays writable, so ``edit()`` of ``setup.py`` or ``pyproject.toml`` succeeds. Suggested fix: read
    ``pip install``/``pip wheel``/``python -m pip``'s folder operands (``.``, ``-e .``, ``./x``; ``uv sync``,
    ``uv run``, ``uv pip install``, ``poetry install``, ``pdm install``, ``hatch`` too: each builds the project)
    as naming the folder's ``setup.py``, ``pyproject.toml`` (and, fail closed, its in-tree backend), as npm's
    ``package.json``.
    Fixed: ``codeact.core.hookruns.buildfiles`` names each local folder a pip (``python -m pip``, ``uv``, ``pdm``,
    ``poetry``) build takes: its ``setup.py``, ``setup.cfg``, ``pyproject.toml`` and in-tree backend."""
    out = _edit_hook_target(tmp_path, {"bash": command}, target)
    assert out.split() == ["PermissionError"], out


_CARGO = {  # a file cargo reads first in the folder a hook's cargo command runs in, created by the program
    "build.rs (cargo clippy)": ("cargo clippy -q", "build.rs",
                                'fn main() { std::process::Command::new("sh").arg("-c").arg("id > /tmp/pwned")'
                                '.status().ok(); }\n'),
    ".cargo/config.toml runner (cargo test)": ("cargo test -q", ".cargo/config.toml",
                                               "[target.'cfg(all())']\nrunner = [\"sh\", \"-c\", \"id > /tmp/pwned\"]\n"),
}


@pytest.mark.parametrize("form", sorted(_CARGO))
def test_the_files_a_hooks_cargo_command_reads_first_are_protected(tmp_path: Path, form: str) -> None:
    """The rule covers the first file a runner reads (make's ``Makefile``, npm's ``package.json``, ``.npmrc``),
    not cargo's: a package's ``build.rs`` beside ``Cargo.toml`` is found without being named and compiled and run
    by every ``cargo check``/``clippy``/``build``/``test``, and ``.cargo/config.toml`` (cargo's ``.npmrc``) names
    a ``runner`` for ``cargo test``/``run`` (and a ``rustc-wrapper``). This test's ``build.rs`` ran ``id`` at
    ``cargo clippy -q --offline``, and its ``.cargo/config.toml`` at ``cargo test -q --offline`` (cargo 1.95,
    this machine). With a hook's ``cargo clippy``/``cargo test`` both ``create()``
    calls succeed. Suggested fix: for ``cargo`` (``--manifest-path``, ``-C``), protect ``Cargo.toml``,
    ``build.rs`` and ``.cargo/config*`` of the folder it runs in and its parents inside the workspace (cargo reads
    every ``.cargo/config.toml`` up the tree).
    Fixed: ``codeact.core.hookruns.buildfiles.cargo_files``: ``Cargo.toml``/``build.rs`` there and below, ``.cargo/config*``
    and ``rust-toolchain*`` there and above, for any cargo command."""
    command, target, text = _CARGO[form]
    import json
    import subprocess

    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    (ws / "src").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": command}]}}))
    (ws / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\n')
    (ws / "src/main.rs").write_text("fn main() {}\n")
    code = (f"try:\n    print(create(path={target!r}, file_text={text!r}))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


def test_the_jvm_options_a_hooks_maven_command_reads_first_are_protected(tmp_path: Path) -> None:
    """The same gap for Maven: the ``mvn`` launcher reads ``.mvn/jvm.config`` of the project (found upwards from
    the folder it runs in) as the JVM's options before anything else. ``-Xmx6m
    -XX:OnOutOfMemoryError=echo${IFS}PWNED>/tmp/pwned`` made ``mvn -q -o validate`` run the command (the JVM runs
    it through ``/bin/sh -c`` when the tiny heap runs out at start-up: Maven 3.8, this machine, offline). With a
    hook's ``mvn`` the program's ``create()`` of ``.mvn/jvm.config`` succeeds (``.mvn/maven.config``, which adds
    options to every mvn, and ``pom.xml``, whose plugins run at each build, are writable too). Suggested fix: for
    ``mvn``/``mvnw`` (``-f``, ``--file``), protect ``pom.xml`` and ``.mvn/`` of its folder (``.npmrc``'s twins);
    Gradle's ``gradle.properties``/``build.gradle*``/``settings.gradle*`` likewise.
    Fixed: ``codeact.core.hookruns.buildfiles.maven_files``: ``pom.xml`` there and below, ``.mvn/`` there and above (Gradle
    is not covered yet; docs/security.md says so)."""
    import json
    import subprocess

    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "mvn -q -o validate"}]}}))
    (ws / "pom.xml").write_text("<project><modelVersion>4.0.0</modelVersion><groupId>x</groupId><artifactId>x"
                                "</artifactId><version>1</version><packaging>pom</packaging></project>\n")
    text = "-Xmx6m -XX:OnOutOfMemoryError=echo${IFS}PWNED>/tmp/pwned\n"
    code = (f"try:\n    print(create(path='.mvn/jvm.config', file_text={text!r}))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


_MANAGER_CODE = {  # a package manager's project file that names or is code it runs at every command
    "pnpm's .pnpmfile.cjs (pnpm lint)": ("pnpm lint", ".pnpmfile.cjs",
                                         "require('child_process').execSync('id > /tmp/pwned')\n"),
    "pnpm's .pnpmfile.cjs (pnpm install)": ("pnpm install", ".pnpmfile.cjs",
                                            "require('child_process').execSync('id > /tmp/pwned')\n"),
    "yarn's .yarnrc yarn-path": ("yarn lint", ".yarnrc", 'yarn-path "./tools/y.js"\n'),
    "yarn's .yarnrc.yml yarnPath": ("yarn lint", ".yarnrc.yml", "yarnPath: ./tools/y.js\n"),
}


@pytest.mark.parametrize("form", sorted(_MANAGER_CODE))
def test_the_code_file_a_hooks_package_manager_loads_is_protected(tmp_path: Path, form: str) -> None:
    """``.npmrc`` is protected because npm runs what it names; its twins are not. pnpm loads the project's
    ``.pnpmfile.cjs`` (its ``readPackage`` hooks) at every command, ``pnpm run lint`` as well as ``pnpm
    install``, and yarn 1 hands every command to the JavaScript file ``.yarnrc``'s ``yarn-path`` (or
    ``.yarnrc.yml``'s ``yarnPath``) names. A created ``.pnpmfile.cjs`` ran at ``pnpm install --offline`` and at
    ``pnpm run lint`` (pnpm 9.15.9), and a created ``.yarnrc``/``.yarnrc.yml`` pointing at a created
    ``tools/y.js`` ran it at ``yarn lint`` (yarn 1.22.22), on this machine. With a hook's ``pnpm``/``yarn``
    command every ``create()`` succeeds. Suggested fix: protect ``.pnpmfile.cjs`` (and the file pnpm's
    ``pnpmfile`` setting names), ``.yarnrc``, ``.yarnrc.yml``, ``.yarn/releases/``, ``.yarn/plugins/``,
    ``.pnp.cjs``/``.pnp.loader.mjs`` (yarn berry requires them into node), bun's ``bunfig.toml`` (``preload``)
    by name, as ``.npmrc`` is.
    Fixed: any pnpm, yarn or bun command protects what it loads anywhere in the repository (``_MANAGER_FILES``)."""
    command, target, text = _MANAGER_CODE[form]
    import json
    import subprocess

    from test_attacks_round6_links import _run

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": command}]}}))
    (ws / "package.json").write_text('{"name": "x", "version": "1.0.0", "scripts": {"lint": "true"}}\n')
    code = (f"try:\n    print(create(path={target!r}, file_text={text!r}))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


_NPX_PREFIXES = {  # an npx whose --prefix value is read as the package spec: the whole repository
    "npx --prefix \"$CLAUDE_PROJECT_DIR\"": 'npx --prefix "$CLAUDE_PROJECT_DIR" eslint --fix .',
    "npm exec --prefix \"$CLAUDE_PROJECT_DIR\"": 'npm exec --prefix "$CLAUDE_PROJECT_DIR" -- eslint .',
    "npx --prefix .": "npx --prefix . prettier --check .",
}


@pytest.mark.parametrize("form", sorted(_NPX_PREFIXES))
def test_an_npx_prefix_leaves_the_repository_writable(tmp_path: Path, form: str) -> None:
    """False positive of aba35c2 (and of 8b3a3b7 for ``.``): ``_package_folders`` skips an option but not its
    value, so ``npx --prefix "$CLAUDE_PROJECT_DIR" eslint --fix .`` takes ``$CLAUDE_PROJECT_DIR`` for the package
    spec; since aba35c2 a spec starting with ``$`` is a folder, so ``$CLAUDE_PROJECT_DIR/*`` — every file of the
    repository — is protected and every write is refused (here ``notes.md``). npm reads ``--prefix`` as taking
    a value (the folder whose ``node_modules/.bin`` it looks in) and runs ``eslint``. Suggested fix: the same as
    for the valued options above: skip npm's valued options with their values (``--prefix``, ``-C``,
    ``--cache``, ``--loglevel``, ``--registry``, ``--userconfig``, ``-w``...) before taking the spec.
    Fixed: ``_package_folders`` skips ``--prefix`` with its value (npm's valued options, as nopt reads them)."""
    out = _edit_hook_target(tmp_path, {"bash": _NPX_PREFIXES[form]}, "notes.md")
    assert out.split() != ["PermissionError"], out


# ------------------------------------------------------------ 9abd0ec: git config --show-scope
_OLD_GIT = """#!/bin/sh
# git before 2.26 (Ubuntu 20.04's 2.25.1): `git config --show-scope` is an unknown option
for arg in "$@"; do
    if [ "$arg" = "--show-scope" ]; then
        echo "error: unknown option \\`show-scope'" >&2
        exit 129
    fi
done
exec {git} "$@"
"""


def test_a_script_git_config_runs_is_protected_with_a_git_before_2_26(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """9abd0ec reads the repository's config with ``git config --list --show-scope --show-origin -z``.
    ``--show-scope`` came with git 2.26 (March 2020); an older git (Ubuntu 20.04 LTS ships 2.25.1) refuses the
    option ("error: unknown option", exit 129, nothing on stdout), and ``_git_runs`` then reads an empty list: no
    ``core.fsmonitor``, filter, alias or ``core.hooksPath`` is seen and every file they run is writable — fail
    open, with no word said. Before 9abd0ec, ``--show-origin`` needed git 2.8. Here a wrapper stands for git 2.25
    (it refuses ``--show-scope`` as git does an unknown option, exit 129 like git 2.39's ``git config --list
    --bogus``, and passes everything else to the real git); ``core.fsmonitor = sh tools/x.sh`` then leaves
    ``tools/x.sh`` writable. Suggested fix: when the call fails (non-zero exit, or an unknown option), retry
    without ``--show-scope`` reading every file as the repository's (the old, stricter reading), or fail closed
    (refuse writes in the work tree, naming the cause) rather than read no config.
    Fixed: ``_git_listing`` retries with ``--show-origin`` alone, each value's scope told by its file, and a
    listing git cannot give at all refuses every write of the work tree (``_GitRuns.failed``)."""
    import shutil

    from test_attacks_round15 import _edit

    real = shutil.which("git")
    assert real is not None
    fake = tmp_path / "oldgit"
    fake.mkdir()
    (fake / "git").write_text(_OLD_GIT.replace("{git}", real))
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    out = _edit(tmp_path, [("core.fsmonitor", "sh tools/x.sh")])
    assert out.split() == ["PermissionError"], out


def test_the_same_git_config_is_read_with_this_machines_git(tmp_path: Path) -> None:
    """The control: with the real git (2.39 here) the same config refuses the write."""
    from test_attacks_round15 import _edit

    out = _edit(tmp_path, [("core.fsmonitor", "sh tools/x.sh")])
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ a pattern target through the repository's own link
_THROUGH_A_LINK = {  # hook command, the link (a committed folder link), where it leads, the file edited there
    "npx ./cli (aba35c2's cli/*)": ("npx --yes ./cli", "cli", "tools/cli", "tools/cli/cli.js"),
    "bash ./hk/*.sh (a documented pattern)": ("bash ./hk/*.sh", "hk", "tools/hooks", "tools/hooks/a.sh"),
}


@pytest.mark.parametrize("form", sorted(_THROUGH_A_LINK))
def test_a_file_a_pattern_target_reaches_through_a_folder_link_is_protected(tmp_path: Path, form: str) -> None:
    """docs/security.md: "a pattern (``./hooks.d/*.sh``) covers every file it matches; through links too". But
    ``boundary._runs`` follows links for named targets only (``if target.glob or not target.named: continue``), so
    a pattern through a folder link the repository commits (``hk -> tools/hooks``) covers ``hk/a.sh`` and not
    ``tools/hooks/a.sh``, the same file. aba35c2's folder specs are such patterns too: ``npx ./cli`` protects
    ``cli/*``, and with ``cli -> tools/cli`` the bin ``tools/cli/cli.js`` is writable (``cli/package.json`` is
    named, so it is followed and protected). Real tools follow the link: ``bash ./hk/*.sh`` ran
    ``tools/hooks/a.sh`` (bash 5.2) and ``npx --yes --offline ./cli`` ran ``tools/cli/cli.js`` (npx 11.19).
    ``edit()`` of the real path succeeds. Suggested fix: resolve a pattern's fixed leading folders through links
    inside the workspace (as named targets are), and match the written path against the pattern so rebased.
    Fixed: ``boundary._pattern_through_link`` resolves a pattern's fixed folders with ``resolve_beneath`` and
    matches the written path against the pattern rebased there."""
    import json
    import subprocess

    from test_attacks_round6_links import _run

    command, link, to, target = _THROUGH_A_LINK[form]
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    (ws / to).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": command}]}}))
    (ws / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    (ws / to / "package.json").write_text('{"name": "cli", "version": "1.0.0", "bin": {"cli": "cli.js"}}\n')
    (ws / target).write_text("exit 0\n")
    os.symlink(to, ws / link)
    code = (f"try:\n    print(edit(path={target!r}, old_str='exit 0', new_str='id'))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize("command", ['cd "${env:CLAUDE_PROJECT_DIR}"; npm run lint',
                                     "Set-Location ${env:CLAUDE_PROJECT_DIR}; npm run lint"])
def test_a_braced_powershell_project_variable_leaves_the_repository_writable(tmp_path: Path, command: str) -> None:
    """False positive beside 9abd0ec (which kept the ``}`` of a ``${...}`` so that ``cd "${CLAUDE_PROJECT_DIR}"``
    is read): PowerShell's braced spelling of an environment variable, ``${env:CLAUDE_PROJECT_DIR}``, is not read
    as the project, whereas ``$env:CLAUDE_PROJECT_DIR`` is. The ``cd`` goes to "a folder not known here", the
    hooks file is one past what CodeAct reads, and every write of the workspace is refused (here ``notes.md``).
    ``${env:NAME}`` is the same variable as ``$env:NAME`` in PowerShell (about_Environment_Variables). Suggested
    fix: read ``${env:NAME}`` as ``$env:NAME`` (case-insensitively, as PowerShell does) wherever the project's
    and the entry's variables are replaced.
    Fixed: ``hookruns._expand`` reads ``${env:D}`` and ``$Env:D`` as ``$env:D``."""
    out = _edit_hook_target(tmp_path, {"powershell": command}, "notes.md")
    assert out.split() != ["PermissionError"], out


@pytest.mark.parametrize("command", ['npx --call="cd impl && bash run.sh"',
                                     'npm exec --call="cd impl && bash run.sh"'])
def test_a_hook_script_npx_call_text_runs_is_protected(tmp_path: Path, command: str) -> None:
    """Beside aba35c2: ``npx -c "cd impl && bash run.sh"`` and ``npx --call "..."`` are read as a command of their
    own (``impl/run.sh`` protected), but the joined ``--call="..."`` (nopt's ``--key=value``) is not: the text
    is one word that names nothing. ``npx --offline --call="cd impl && bash run.sh"`` and ``npm exec --call=...``
    ran ``impl/run.sh`` (npm 11.19), and ``edit()`` of it succeeds. Suggested fix: read ``--call=TEXT`` (and
    ``-c=TEXT``) as ``--call TEXT``, a shell command's text.
    Fixed: ``hookruns._nested_words`` reads an option's ``=`` value holding spaces as words too, and the
    command reader reads npx's ``-c``/``--call``/``--call=`` text as a command."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize(("command", "target"), [("npm test --node-options=--require=./impl/x.js", "impl/x.js"),
                                                 ("npm run lint --node-options=--import=./impl/x.mjs",
                                                  "impl/x.mjs")])
def test_a_module_npms_node_options_preloads_is_protected(tmp_path: Path, command: str, target: str) -> None:
    """``NODE_OPTIONS=...`` (an entry's ``env`` or a ``VAR=`` word) makes the hooks file one past what CodeAct
    reads, but npm's own ``--node-options=...`` config, which npm exports as ``NODE_OPTIONS`` to every script
    it runs, is not: with the value joined by ``=`` twice (``--node-options=--require=./impl/x.js``) no word is
    the path, and ``impl/x.js`` stays writable (``node --require=./impl/x.js`` alone is read and protected).
    ``npm test --node-options=--require=./impl/x.js`` with ``"test": "node -e 0"`` ran ``impl/x.js`` (npm 11.19,
    node 20). Suggested fix: read npm's ``--node-options`` (``npm_config_node_options``) as ``NODE_OPTIONS``:
    add it to the unfollowed variables, or read its value's words as node's options.
    Fixed: npm's options naming what it runs or reads (``--node-options``, ``--script-shell``, ``--userconfig``...)
    make the hooks file one past what CodeAct reads, as their ``npm_config_*`` variables do."""
    out = _edit_hook_target(tmp_path, {"bash": command}, target)
    assert out.split() == ["PermissionError"], out


@pytest.mark.parametrize("command", ["npx --yes pnpm@9 run lint", "npx --yes yarn@1 lint", "npx -y npm@10 run lint"])
def test_the_package_json_a_versioned_package_manager_runs_is_protected(tmp_path: Path, command: str) -> None:
    """``npx yarn lint`` and ``npm exec -- yarn lint`` are read as yarn (``package.json`` protected), but a
    version-pinned spec is not: ``npx --yes pnpm@9 run lint``, ``npx --yes yarn@1 lint``, ``npx -y npm@10 run
    lint`` (the usual way to pin the package manager in a hook) leave the top ``package.json`` writable, and each
    ran its ``lint`` script (npx 11.19 fetching pnpm 9, yarn 1.22; npm likewise). ``edit()`` succeeds. Suggested
    fix: strip a ``@version`` (and a scope-less ``name@tag``) from npx's command spec before matching it against
    npm, pnpm, yarn, bun (``_NPMS``, ``_PACKAGE_RUNNERS``).
    Fixed: ``_runner_files`` reads ``npm@10``, ``pnpm@9``, ``yarn@1`` as npm, pnpm, yarn."""
    out = _edit_hook_target(tmp_path, {"bash": command}, "package.json")
    assert out.split() == ["PermissionError"], out
