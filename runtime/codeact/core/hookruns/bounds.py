"""What is read of one hooks file, and the errors past it: :class:`Unread` (a bound passed: which scripts it runs
is not known) and :class:`Stopped` (the run's deadline passed)."""
from __future__ import annotations

from ..limits import Deadline

MAX_HOOKS_BYTES = 1 << 20  # what is read of one hooks or settings file; a larger one is Unread
MAX_COMMAND_CHARS = 16 << 10  # one command's text (a hook command is a line); a longer one makes its file Unread
MAX_WORDS = 10_000  # words split of one file's commands, all entries together; past it the file is Unread
MAX_BASES = 16  # folder changes (`cd`) read of one command; its words are read from at most 8x as many folders
MAX_HOOKS_FILES = 64  # *.json files (and folders) read of one .github/hooks tree (the program cannot add one: HOOKS_RULE)
MAX_ENTRIES = 1_000  # command entries read of one file; past it the file is Unread
MAX_NODES = 20_000  # JSON values walked of one file, looking for entries; past it the file is Unread
MAX_DEPTH = 12  # how deep entries are looked for (the CLI's, VS Code's and Claude's shapes are 3 to 5 deep)


class Unread(Exception):
    """A hooks file past what is read of one: the message says which bound. Which scripts it runs is not known."""


class Stopped(Exception):
    """The run's deadline passed while a hooks file was read; ``timeout`` is the run's time limit in seconds."""

    def __init__(self, timeout: float) -> None:
        super().__init__(timeout)
        self.timeout = timeout


class Budget:
    """The work left to read one hooks file: :data:`MAX_WORDS` words, and the run's deadline (when in a run)."""

    __slots__ = ("deadline", "read", "words")

    def __init__(self) -> None:
        self.deadline = Deadline.current()
        self.words = 0
        self.read = False  # a file of the repository was read too (a package.json's main): not cached

    def spend(self, words: int = 1) -> None:
        """Count ``words`` more: :class:`Unread` past :data:`MAX_WORDS`, :class:`Stopped` past the deadline."""
        self.words += words
        if self.words > MAX_WORDS:
            raise Unread(f"more than {MAX_WORDS:,} words of commands")
        if self.deadline is not None and self.deadline.expired():
            raise Stopped(self.deadline.timeout)
