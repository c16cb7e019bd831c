"""Search tools: glob and grep, confined to the workspace.

Both use ripgrep when it is available (``rg`` next to this Python, as the ``ripgrep`` wheel installs it, else on
``PATH``) and a pure-Python walk otherwise; the two give the same answers. The rules, shared by both:

- only the workspace is reached; symbolic links met while walking are never followed (nor listed);
- hidden files are included, but ``.git`` and the folders in ``SKIP_DIRS`` are always skipped (whatever an
  ignore file says);
- ``.gitignore``, ``.ignore`` and ``.rgignore`` files inside the workspace are honoured as ripgrep honours them, in a
  git repository or not (a nested repository does not inherit the outer ``.gitignore``), together with
  ``.git/info/exclude``; ignore files above the workspace and a user's global git excludes are not read, so an
  answer does not depend on the machine; an ignore file that is a symbolic link is read only where it leads to a
  file inside the workspace (as the confined ripgrep reads it: ``walk.read_ignore_file``);
- a ``path`` named explicitly is searched even if it is ignored itself (its contents are still filtered);
- files holding a NUL byte are binary and skipped; text is read as UTF-8 (a UTF-8 or UTF-16 BOM is honoured);
- lines end at ``\\n`` only; results are sorted as ``sorted()`` sorts the paths, then by line, paths workspace-relative;
- a search from the workspace root leaves out CodeAct's own stamped files (what the install's manifest lists as owned:
  its instructions, agent, skills, hooks file); a ``path`` inside them (``.github/skills``) searches them;
- every call ends by the run's deadline and holds bounded memory: ripgrep's output is read as it comes and only the
  results that can be returned are kept (``max_results``, and the tool-result byte limit); a matched line too long
  for ripgrep to print is read back from the file and cut; the Python search reads files in chunks.

Globs follow .gitignore/ripgrep syntax: ``*`` and ``?`` stay within one path segment, ``**`` crosses folders,
``[abc]``, ``[!a-z]`` and ``{py,md}`` work. A glob without ``/`` matches a file's name at any depth
(``*.py`` finds every Python file); a glob with ``/`` is matched against the path below ``path``
(``src/*.py``, ``**/tests/*.py``). Regular expressions are Python's ``re``; ripgrep runs them when it reads them
the same way, and the Python search runs the rest (look-arounds, back-references), where the run's deadline can stop
it: in process on the main thread (``SIGALRM``), else in a worker process (:mod:`.regex_worker`).

A grep or glob that returns less than everything says so in a note (:mod:`codeact.core.notices`) with the real
total; both cut their lists exactly as the runner counts them, so the runner never cuts them again.

The rest of the runtime uses what this module exports (the tools, the listing outline reads, the glob syntax); behind
it, one module per concern:
:mod:`.glob_files` and :mod:`.grep_lines` (the two tools), their ripgrep engines (:mod:`.rg_listing`,
:mod:`.rg_grep`, on :mod:`.ripgrep`) and Python engines (:mod:`.walk`, :mod:`.python_grep`, on
:mod:`.regex_worker`), what a search covers (:mod:`.scope`, :mod:`.tracked`) and what it returns (:mod:`.results`).
"""
from __future__ import annotations

from .glob_files import glob, matching_files
from .grep_lines import DEFAULT_MAX_RESULTS, grep, search_answer
from .results import Answer
from .ripgrep import rg_binary
from .walk import Glob

__all__ = ["Answer", "DEFAULT_MAX_RESULTS", "Glob", "glob", "grep", "matching_files", "rg_binary", "search_answer"]
