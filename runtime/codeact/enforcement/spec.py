"""What the preToolUse hooks enforce, as data: the one source both hooks (bash and PowerShell) are generated from.

The hooks do not parse a shell language. In exclusive mode a shell call is allowed only when its command line is
one of a few exact forms (:data:`FORMS`): the launcher as the instructions give it (a literal prefix), an allowed
subcommand, options from a closed set, and the program in single quotes, in double quotes holding nothing that
expands, or in a quoted heredoc / literal here-string. Everything else is denied with a reason that shows the
accepted form. The stamp renders the hooks from it (render.hook_template); nothing generated is committed.

Patterns are written in the subset that POSIX ERE (bash's ``=~``) and .NET regular expressions share: no ``\\d``,
``\\s`` or ``\\b``, no lazy or possessive quantifiers, no look-around. A line break is a literal newline character;
the renderer anchors each pattern at both ends and lets ``.`` match newlines (bash always does; .NET with
``Singleline``).
"""
from __future__ import annotations

from typing import NamedTuple

MODES = ("off", "nudge", "exclusive")  # the stamped answer; CODEACT_MODE overrides it per session

# --- tools ---------------------------------------------------------------------------------------------------------
# Each client's own names (docs/enforcement.md, "Clients"): the Copilot CLI and the cloud agent (`bash`, `view`...,
# GitHub's hooks reference), the CLI's PascalCase/Claude payload (`Bash`, `Read`...), VS Code agent mode
# (`run_in_terminal`, `read_file`..., microsoft/vscode-copilot-chat src/extension/tools/common/toolNames.ts).
SHELL_TOOLS = {"bash": "sh", "Bash": "sh", "powershell": "ps", "PowerShell": "ps"}
# VS Code's terminal tool runs the user's terminal shell: a Unix shell where VS Code runs the `bash` entry (Linux,
# macOS), PowerShell where it runs the `powershell` one (Windows). Each hook takes it as its own shell.
TERMINAL_TOOLS = ("run_in_terminal",)
# Tools that read files or list them: nudge mode counts a run of these.
READ_TOOLS = ("view", "glob", "grep", "rg", "Read", "Glob", "Grep", "LS", "NotebookRead",
              "read_file", "file_search", "grep_search", "list_dir", "semantic_search", "get_search_view_results",
              "search_workspace_symbols", "list_code_usages", "read_project_structure", "test_search")
# Tools that reach no file and no network: allowed in exclusive mode; neither a read nor a break in nudge mode.
HOUSEKEEPING_TOOLS = ("report_intent", "update_todo", "TodoWrite", "skill", "Skill", "read_bash", "list_bash",
                      "stop_bash", "BashOutput", "KillShell", "KillBash", "ask_user",
                      "manage_todo_list", "get_terminal_output")
NUDGE_AFTER = 3  # reads in a row allowed; the next one is denied

# --- the launcher's command line -------------------------------------------------------------------------------------
# Launcher subcommands the model may run in exclusive mode; the others (discover, refresh, link, uninstall, drift,
# setup, server, ...) change the install or start processes, and are the user's.
MODEL_SUBCOMMANDS = ("run", "tools", "describe", "search", "doctor")
TIMEOUT_MAX = 600  # seconds: the largest --timeout the hook lets through

# A path value (--workspace, --file): relative, from a closed set of characters, never a protected folder.
PATH = r"[A-Za-z0-9_.][A-Za-z0-9_./-]*"
# Protected folders a --workspace or --file value may not be, or lie inside (case-insensitive file systems too).
PROTECTED_FOLDERS = (".git", ".codeact", ".github/hooks", ".github/agents", "plugins/codeact")
TIMEOUT = r"([1-9][0-9]?|[1-5][0-9][0-9]|600)"
NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
SESSION_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"  # `run --session NAME` (codeact.core.sessions: a file name)
OPTION = ("(--json|--timeout " + TIMEOUT + "|--backend (auto|monty|hyperlight)|--workspace[ =]" + PATH
          + "|--file[ =]" + PATH + "|--session[ =]" + SESSION_NAME + ")")
OPTIONS = "( " + OPTION + ")*"
STDERR = "( 2>&1)?"  # merging stderr into stdout is harmless and models write it often


class Form(NamedTuple):
    """One accepted command line, after the launcher and one space.

    ``body_forbid``: a pattern that must NOT occur in the program text between the first line and the closing line
    (a heredoc body holding its own delimiter line would end early and run the rest as commands)."""

    name: str
    shell: str  # "sh" or "ps"
    pattern: str
    body_forbid: str = ""


FORMS = (
    Form("code in single quotes", "sh", "run" + OPTIONS + " --code '[^']*'" + STDERR),
    Form("code in double quotes", "sh", "run" + OPTIONS + ' --code "[^"$`\\\\!]*"' + STDERR),
    Form("heredoc", "sh", "run" + OPTIONS + " - <<'PY'" + STDERR + "\n(PY|.*\nPY)\n?", body_forbid="\nPY\n"),
    Form("program file or options only", "sh", "run" + OPTIONS + STDERR),
    Form("read-only subcommand", "sh", "(tools( " + NAME + ")?|describe " + NAME + "|search (" + NAME
         + "|'[^']*')|doctor)( --json)?" + STDERR),
    Form("code in single quotes", "ps", "run" + OPTIONS + " --code '([^']|'')*'" + STDERR),
    Form("here-string", "ps", "run" + OPTIONS + " --code @'\n.*\n'@" + STDERR, body_forbid="\n[ \t]*'@"),
    Form("program file or options only", "ps", "run" + OPTIONS + STDERR),
    Form("read-only subcommand", "ps", "(tools( " + NAME + ")?|describe " + NAME + "|search (" + NAME
         + "|'([^']|'')*')|doctor)( --json)?" + STDERR),
)

# Characters PowerShell takes as quotes although they are not ASCII quotes (U+2018..U+201E): never allowed.
PS_SMART_QUOTES = "\u2018\u2019\u201a\u201b\u201c\u201d\u201e"


def smart_quote_escapes() -> str:
    """The same characters as JSON escapes in the raw payload (\\u2018 ... in either case)."""
    codes = "|".join(_case_insensitive(f"{ord(c):04x}") for c in PS_SMART_QUOTES)
    return "\\\\u(" + codes + ")"


def protected_value_pattern() -> str:
    """A --workspace/--file value that is, or lies inside, a protected folder, or climbs out with ``..``."""
    folders = "|".join(_case_insensitive(f).replace(".", "[.]") for f in PROTECTED_FOLDERS)
    return "(^|/)(" + folders + ")(/|$)|(^|/)[.][.](/|$)"


def _case_insensitive(text: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)


# The launcher as the model must type it, per scope and shell: a literal prefix of the command, then one space.
# {dir} is the install folder: `.codeact` in repo scope (commands run in the repository root), the hook's own
# folder (absolute) in plugin scope. The deny reasons show the first form that bash reads back as that very path (a
# space or a quote in the path rules a form out); a hook only runs when the CLI started in the repository's root, so
# the short relative form works there. The instructions give the root-anchored form, which works in any subfolder.
# {abs} is the install folder's absolute path (as the hook reaches it, and with every link resolved): the launcher
# is the launcher however it is named (issue 43.3).
LAUNCHERS: dict[str, dict[str, tuple[str, ...]]] = {
    "repo": {"sh": ("{dir}/bin/codeact", '"$(git rev-parse --show-toplevel)/{dir}/bin/codeact"', "./{dir}/bin/codeact",
                    "{abs}/bin/codeact"),
             "ps": ("& {dir}/bin/codeact.ps1", '& "$(git rev-parse --show-toplevel)/{dir}/bin/codeact.ps1"',
                    "& ./{dir}/bin/codeact.ps1", "& {abs}/bin/codeact.ps1")},
    "global": {"sh": ('"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"', "{abs}/bin/codeact"), "ps": ()},
    # plugin: also as reached from the skill's base directory, which the skill arrives with
    "plugin": {"sh": ("{dir}/bin/codeact", "'{dir}/bin/codeact'", "{dir}/skills/codeact/../../bin/codeact"),
               "ps": ()},
}
# Installs side by side (global + repo, global + plugin): the CLI runs every install's hooks, so each hook also
# passes the launcher forms of the other CodeAct installs it finds for the session's folder — the global one in
# $COPILOT_HOME/codeact (with its hooks file linked), the repository's <git root>/.codeact, an enabled codeact plugin
# (a live local marketplace in $COPILOT_HOME/settings.json, or a copy under installed-plugins/). A folder counts
# only when its bin/codeact is a CodeAct launcher: its second line starts with LAUNCHER_MARK.
LAUNCHER_MARK = "# codeact launcher (owned by the codeact Copier template"
# Which install's sessionStart hook speaks when several are on: the first in this order (a repository's hooks may
# not run at all: an untrusted folder, a session started in a subfolder); its note names every install.
SPEAKER_ORDER = ("global", "plugin", "repo")
# A JSON escape for U+0000 in the raw command text (an even run of backslashes before it is literal backslashes).
NUL_ESCAPE = "(^|[^\\\\])(\\\\\\\\)*\\\\u0000"

# --- the custom agent's tools (issue 43.2) ---------------------------------------------------------------------------
# The tool each client's documentation gives a custom agent for running a terminal command: GitHub's custom agents
# configuration (the CLI and the cloud agent: `execute`, aliases shell/Bash/powershell, mapped to bash/powershell)
# and VS Code's tools reference (`execute/runInTerminal`, with `execute/getTerminalOutput` for its output). Every
# client ignores the names it does not know, so the one agent file lists them all.
AGENT_TERMINAL_TOOL = {"cli": "execute", "cloud-agent": "execute", "vscode": "execute/runInTerminal"}
AGENT_TOOLS = ("execute", "execute/runInTerminal", "execute/getTerminalOutput")

# --- what each client reads --------------------------------------------------------------------------------------------
# The CLI and the cloud agent read the top-level fields (a `hookSpecificOutput` alone is ignored: seen on 1.0.102);
# VS Code reads only `hookSpecificOutput` (its hooks reference and ChatHookService). Every hook prints both, from
# these templates; {text} is JSON string text (the reason, or the context for the model).
OUTPUT = {
    "deny": '{"permissionDecision":"deny","permissionDecisionReason":"{text}","hookSpecificOutput":'
            '{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"{text}"}}',
    "sessionStart": '{"additionalContext":"{text}","hookSpecificOutput":'
                    '{"hookEventName":"SessionStart","additionalContext":"{text}"}}',
    "postToolUse": '{"additionalContext":"{text}","hookSpecificOutput":'
                   '{"hookEventName":"PostToolUse","additionalContext":"{text}"}}',
}

# --- what the model is told ------------------------------------------------------------------------------------------
# {launcher} is the launcher as the model must type it; {tools} the enabled tools; {turn_off} how the user turns
# the mode off in this scope. Both hooks fill these in and JSON-escape the result.
EXAMPLE = {
    "sh": "{launcher} run - <<'PY'\nfor p in glob(pattern=\"**/*.md\"):\n    print(p, len(view(path=p)))\nPY",
    "ps": "{launcher} run --code @'\nfor p in glob(pattern=\"**/*.md\"):\n    print(p, len(view(path=p)))\n'@",
}
FUNCTIONS = "Functions in the program: {tools} ({launcher} tools lists all)."
UPDATE = "copier update -a .copier-answers.codeact.yml --trust --defaults -d enforcement=off"  # layout.UPDATE_COMMAND
TURN_OFF = {
    "repo": "The user can switch this off: CODEACT_MODE=off, or " + UPDATE,
    "global": "The user can switch this off: CODEACT_MODE=off, or " + UPDATE + " in the folder ~/.copilot/codeact "
              "links to",
    "plugin": "The user can switch this off: CODEACT_MODE=off where the CLI starts, or the plugin's publisher with "
              "copier update --trust --defaults -d enforcement=off",
}
NUDGE = ("CodeAct nudge: this would be the 4th file read in a row, so it was not run. Batch the reads in ONE Python "
         "program instead, run by a shell call:\n{example}\n" + FUNCTIONS + " Single reads are allowed again now. "
         "{turn_off}")
TOOL_OFF = ("CodeAct exclusive mode: the {tool} tool is off in this repository. Do the work in ONE Python program, "
            "run by a shell call that is only the launcher:\n{example}\nNothing before or after it. " + FUNCTIONS
            + " {turn_off}")
COMMAND = ("CodeAct exclusive mode: {why}. Run ONLY the launcher, e.g.:\n{example}\nNothing before or after it (no "
           "cd, ;, &&, |, VAR=). " + FUNCTIONS + " {turn_off}")


class Why(NamedTuple):
    """A reason a shell call is denied; ``pattern`` (when set) picks it for a command that matched no form."""

    key: str
    text: str
    pattern: str = ""


# Checked in this order; the first that applies is the reason given.
WHY = (
    Why("too_long", "this call is too long for the hook to check (over 128 KB); put a long program in a "
        "workspace file and run it with --file"),
    Why("nul", "it holds a NUL character (\\u0000), which the shell would cut the command at"),
    Why("smart_quotes", "it has typographic quotes, which PowerShell takes as quotes"),
    Why("no_command", "the call has no command"),
    Why("two_commands", "the call holds more than one command field"),
    Why("two_tools", "the call holds more than one tool name"),
    Why("empty", "the command is empty", "^[ \t\r\n]*$"),
    Why("assign", "it sets a variable before the launcher; CODEACT_* and other variables can widen the sandbox",
        "^[ \t]*[A-Za-z_][A-Za-z0-9_]*="),
    Why("vars", "it changes variables; CODEACT_* and other variables can widen the sandbox",
        "^[ \t]*(export|env|declare|typeset|set|unset|local|readonly|Set-Item|Set-Variable)([ \t]|$)"),
    Why("repo_unproven", "this repository's launcher counts only once its own CodeAct hooks ran in this session, "
        "and they did not (an untrusted folder, or a start in a subfolder). Use {launcher}"),
    Why("not_launcher", "a shell call may only run the CodeAct launcher ({launcher})"),
    Why("user_command", "this launcher subcommand is the user's, not the model's: exclusive mode allows only "
        + ", ".join(MODEL_SUBCOMMANDS), "^(discover|refresh|link|uninstall|drift|setup|server|provider)( |$)"),
    Why("protected", "its --workspace or --file is, or lies inside, a protected folder ("
        + ", ".join(PROTECTED_FOLDERS) + ") or climbs out with .."),
    Why("outside", "its --workspace or --file is not an existing path inside this repository"),
    Why("timeout", f"its --timeout is over {TIMEOUT_MAX} seconds or not a whole number",
        "--timeout[ =]([^ ]*[^0-9 ][^ ]*|[0-9]{4,}|[6-9][0-9][0-9]|60[1-9])( |$)"),
    Why("heredoc_end", "its heredoc body holds the closing PY line, so the rest would run as commands"),
    Why("form", "it is not an accepted form: run [--json] [--timeout N] [--session NAME] then --code '...' or "
        "- <<'PY' (program, then a line PY); or tools, describe NAME, search WORD, doctor"),
)
WHY_TEXT = {why.key: why.text for why in WHY}
MAX_COMMAND_BYTES = 131072  # a longer payload is denied (too_long) before any pattern runs
# The hooks read at most this much of a payload (reading tens of MiB can outlast the CLI's 5 s hook timeout, which
# lets the call through): one byte more than MAX_COMMAND_BYTES tells a payload that is too long.
MAX_PAYLOAD_READ = MAX_COMMAND_BYTES + 1

# --- the other hook events (post-tool-use.sh, session-start.sh): they add context, never deny -------------------------
# Seen on CLI 1.0.102 (docs/copilot-cli.md): a postToolUse hook's {"additionalContext": TEXT} reaches the model
# appended to the tool's result; a sessionStart hook's arrives as a user message before the prompt.
# postToolUse, nudge mode: after the NUDGE_AFTER-th read in a row the result carries this pointer, and the hook marks
# the run (POINTER_MARK in the counter), so the preToolUse hook lets the next read through instead of denying it.
POINTER = ("CodeAct: " + str(NUDGE_AFTER) + " file reads in a row. Do the rest in ONE Python program, run by a "
           "shell call:\n{example}\n" + FUNCTIONS)
POINTER_MARK = "t"
# sessionStart: the mode in force (nothing in off mode), and on a clone without the runtime's venv, the first run.
SESSION = {
    "nudge": "CodeAct (nudge mode): work that needs 3+ tool calls goes into ONE Python program run with {launcher} "
             "run (details: the codeact skill); after " + str(NUDGE_AFTER) + " file reads in a row a tool result "
             "says so.",
    "exclusive": "CodeAct (exclusive mode): the file tools are off here; do all work in Python programs run with "
                 "{launcher} run, the launcher as the whole shell command.",
}
# Several installs on at once: the one note (see SPEAKER_ORDER) ends with each of them, "scope (mode): launcher".
SESSION_INSTALLS = " CodeAct installs in force here, each launcher works: {installs}."
SESSION_FRESH = (" The sandbox runtime is not set up in this clone yet: the first run installs it (about a minute, "
                 "once); wait for that run instead of starting another.")
