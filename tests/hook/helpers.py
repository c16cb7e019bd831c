"""Running the stamped preToolUse hooks as the Copilot CLI does, and the exact texts they must print."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

HOOK_SH = Path(".codeact/hooks/pre-tool-use.sh")
HOOK_PS1 = Path(".codeact/hooks/pre-tool-use.ps1")
LAUNCHER = ".codeact/bin/codeact"
DEFAULT_TOOLS = ["view", "create", "edit", "glob", "grep", "bash", "sql"]
ALL_TOOLS = ["view", "create", "edit", "glob", "grep", "bash", "sql", "web_fetch", "github_api"]

EXAMPLE_SH = f"{LAUNCHER} run - <<'PY'\nfor p in glob(pattern=\"**/*.md\"):\n    print(p, len(view(path=p)))\nPY"
EXAMPLE_PS = f"& {LAUNCHER}.ps1 run --code @'\nfor p in glob(pattern=\"**/*.md\"):\n    print(p, len(view(path=p)))\n'@"
TURN_OFF = ("The user can switch this off: CODEACT_MODE=off, or copier update -a .codeact/.copier-answers.yml --trust "
            "-d enforcement=off")


def functions(tools: list[str], launcher: str = LAUNCHER) -> str:
    return f"Functions in the program: {', '.join(tools)} ({launcher} tools lists all)."


def reason_tool_off(tool: str, tools: list[str] = DEFAULT_TOOLS) -> str:
    return (f"CodeAct exclusive mode: the {tool} tool is off in this repository. Do the work in ONE Python program "
            f"instead, run by a bash call that is only the launcher:\n{EXAMPLE_SH}\nNothing before or after it (no cd, "
            f";, &&, |, VAR=). {functions(tools)} {TURN_OFF}")


def reason_command(why: str, tools: list[str] = DEFAULT_TOOLS, shell: str = "sh") -> str:
    if shell == "ps":
        return (f"CodeAct exclusive mode: {why}. Run ONLY the launcher, e.g.:\n{EXAMPLE_PS}\nNothing before or after "
                f"it (no cd, ;, |, $, VAR=). {functions(tools, LAUNCHER + '.ps1')} {TURN_OFF}")
    return (f"CodeAct exclusive mode: {why}. Run ONLY the launcher, e.g.:\n{EXAMPLE_SH}\nNothing before or after it "
            f"(no cd, ;, &&, |, VAR=). {functions(tools)} {TURN_OFF}")


def reason_nudge(tools: list[str] = DEFAULT_TOOLS) -> str:
    return ("CodeAct nudge: this would be the 4th file read in a row, so it was not run. Batch the reads in ONE "
            f"Python program instead, run by a bash call:\n{EXAMPLE_SH}\n{functions(tools)} Single reads are allowed "
            f"again now. {TURN_OFF}")


def deny_json(reason: str) -> str:
    """Exactly what the hook prints to deny: one JSON object on one line."""
    return '{"permissionDecision":"deny","permissionDecisionReason":' + json.dumps(reason) + "}\n"


# Why-texts of the exclusive mode's command-line checks (the part before "Run ONLY the launcher").
WHY_CHAIN = "it chains another command with ; & && || or |"
WHY_EXPAND = ("it uses $ or backticks, which expand on the host (quote the program in single quotes or a <<'PY' "
              "heredoc)")
WHY_SUBSHELL = "it uses a subshell or ( )"
WHY_REDIRECT = "it redirects input or output (only a <<'PY' heredoc and 2>&1 are allowed)"
WHY_SYNTAX = "it has shell syntax the hook does not allow outside quotes"
WHY_SECOND_LINE = "it runs more than one command (a second line)"
WHY_AFTER_HEREDOC = "text follows the heredoc's closing PY line"
WHY_UNQUOTED_HEREDOC = ("its heredoc delimiter is unquoted, so $ and backticks in the body expand on the host: "
                        "write <<'PY'")
WHY_TWO_HEREDOCS = "it has more than one heredoc"
WHY_DELIM = "its heredoc delimiter is not a plain word"
WHY_ASSIGN = "it sets a variable before the launcher; CODEACT_* and other variables can widen the sandbox"
WHY_VARS = "it changes variables; CODEACT_* and other variables can widen the sandbox"
WHY_NOT_LAUNCHER = f"a shell call may only run the CodeAct launcher ({LAUNCHER})"
WHY_EMPTY = "the command is empty"
WHY_NO_COMMAND = "the call has no command"
WHY_TWO_COMMANDS = "the call holds more than one command field"
WHY_TWO_TOOLS = "the call holds more than one tool name"
WHY_TOO_LONG = ("this command is too long for the hook to check (over 128 KB); put a long program in a workspace "
                "file and run it with --file")
WHY_TOO_COMPLEX = "it is too complex for the hook to check (over 64 words, quoted pieces or redirections)"
WHY_SMART_QUOTES = "it has typographic quotes, which PowerShell takes as quotes"
WHY_PS_ARRAY = "it passes an array (a , outside quotes)"
WHY_PS_HERESTRING = "only a literal here-string @'...'@ (its closing '@ at the start of a line) is allowed"


def why_path(opt: str) -> str:
    return f"its {opt} is not an existing path inside this repository"


def payload(tool: str, args: Any = None, *, session: str | None = "s-1", shape: str = "camel",
            args_as_string: bool = False) -> str:
    """A preToolUse payload as the CLI sends it: camelCase (1.0.102; toolArgs an object, or a JSON string on older
    builds) or the PascalCase event's Claude shape."""
    if shape == "camel":
        body: dict[str, Any] = {}
        if session is not None:
            body["sessionId"] = session
        body.update({"timestamp": 1795988347236, "cwd": "/repo", "toolName": tool})
        if args is not None:
            body["toolArgs"] = json.dumps(args) if args_as_string else args
    else:
        body = {}
        if session is not None:
            body["session_id"] = session
        body.update({"transcript_path": "/tmp/t.jsonl", "cwd": "/repo", "hook_event_name": "PreToolUse",
                     "tool_name": tool})
        if args is not None:
            body["tool_input"] = json.dumps(args) if args_as_string else args
    return json.dumps(body)


def bash_call(command: str, **kw: Any) -> str:
    return payload("bash", {"command": command, "description": "run it"}, **kw)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def denied(self) -> bool:
        return self.out != ""

    @property
    def reason(self) -> str:
        return json.loads(self.out)["permissionDecisionReason"]


def hook_env(state: Path, mode: str | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment: no inherited CODEACT_*, state under ``state``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
    env["XDG_RUNTIME_DIR"] = str(state)
    env["TMPDIR"] = str(state)
    if mode is not None:
        env["CODEACT_MODE"] = mode
    env.update(extra or {})
    return env


# How the Copilot CLI (1.0.102, seen with a probe hook) runs a hook's `bash` entry: in the repository root, with the
# payload on stdin, as the copilot process's child.
CLI_BASH = ["/bin/bash", "--norc", "--noprofile", "-c"]


def registered_entry(repo: Path) -> str:
    """The `bash` entry the stamped .github/hooks/codeact.json registers."""
    config = json.loads((repo / ".github/hooks/codeact.json").read_text())
    return str(config["hooks"]["preToolUse"][0]["bash"])


def run_sh(repo: Path, stdin: str | bytes, env: Mapping[str, str], timeout: float = 10,
           entry: str | None = None) -> Result:
    """Run the bash hook as the CLI does: the registered `bash` entry (or ``entry``) under `bash -c`."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    argv = CLI_BASH + [entry or registered_entry(repo)]
    proc = subprocess.run(argv, cwd=repo, input=data, env=dict(env), capture_output=True, timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def run_ps1(repo: Path, stdin: str | bytes, env: Mapping[str, str], pwsh: str, timeout: float = 30) -> Result:
    """Run the PowerShell hook as the CLI's `powershell` entry does: `& .codeact/hooks/pre-tool-use.ps1`."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run([pwsh, "-NoProfile", "-NonInteractive", "-Command", f"& {HOOK_PS1.as_posix()}"], cwd=repo,
                          input=data, env=dict(env), capture_output=True, timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
