"""What a repository's hook files run: the paths inside the repository that their commands name.

The Copilot CLI runs the commands of ``.github/hooks/**/*.json`` and the inline hooks of ``.github/copilot/settings*.json``
and ``.claude/settings*.json`` on the host, at every tool call for ``preToolUse``. Those files are protected by name
(:mod:`codeact.core.boundary`); the scripts their commands run are ordinary files unless the boundary refuses them too,
from what this module reads: each entry's ``bash``, ``command``, ``linux``, ``osx`` (a POSIX shell's words),
``powershell``, ``windows`` (PowerShell's or cmd's words), ``exec`` (a native executable: one word) and ``args``, and
its ``env`` values (a runner may run one: make's ``$(CC)``), resolved against its ``cwd`` (relative to the
repository root). A plugin's hooks files (its manifest's ``hooks``, ``hooks.json``, ``hooks/hooks.json``) are read
the same way, ``plugin=True``: from the plugin's folder, with ``${CLAUDE_PLUGIN_ROOT}`` and ``${COPILOT_PLUGIN_ROOT}``
read as that folder. A word names a path when it holds ``/`` or ``\\``, ends in a script suffix, follows an interpreter
(``bash x``, ``python3 x``, ``pwsh -File x``), or, a bare word otherwise, when such a file exists. A runner's first
file is named too (``python -m a.b``: ``a/b.py``; ``make``: the Makefile; ``npm run x``: ``package.json``; ``go run
./cmd/x``: its ``*.go`` files and ``go.mod``; ``npx eslint``: ``eslint.config.*``, as :data:`.names.TOOL_CONFIGS`
says); what the files named import or run in turn is not read (the repository's own code).

Reading is bounded (:data:`MAX_HOOKS_BYTES` a file, :data:`MAX_COMMAND_CHARS` a command, :data:`MAX_WORDS` and
:data:`MAX_ENTRIES` a file) and fails closed: a file past a bound raises :class:`Unread` (which scripts it runs is not
known; the boundary refuses the writes it governs), and reading stops at the run's deadline with :class:`Stopped`.
What was read is cached by the file's identity and change time.

The modules, from the top: :mod:`.entries` (a file's entries), :mod:`.runners` (what a runner reads first),
:mod:`.python_start`, :mod:`.node`, :mod:`.commands` (pipes, here-documents, writers), :mod:`.options` (the package
managers' and make's options), :mod:`.paths`, :mod:`.filters` (awk, sed), :mod:`.words` (splitting, variables),
:mod:`.matching` (targets), :mod:`.names` (the programs known, as data) and :mod:`.bounds`.
"""
from __future__ import annotations

from .bounds import MAX_HOOKS_BYTES, MAX_HOOKS_FILES, Stopped, Unread
from .entries import hook_targets, targets_in, targets_of
from .matching import Target, fold, matches
from .words import shell_words, windows_words

__all__ = ["MAX_HOOKS_BYTES", "MAX_HOOKS_FILES", "Stopped", "Target", "Unread", "fold", "hook_targets", "matches",
           "shell_words", "targets_in", "targets_of", "windows_words"]
