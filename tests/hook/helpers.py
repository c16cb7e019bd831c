"""Running the stamped preToolUse hooks as the Copilot CLI does, and the exact texts they must print."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeact.enforcement import spec

HOOK_SH = Path(".codeact/hooks/pre-tool-use.sh")
HOOK_PS1 = Path(".codeact/hooks/pre-tool-use.ps1")
LAUNCHER = ".codeact/bin/codeact"  # the relative form; SHOWN is the one the reasons show
SHOWN = spec.LAUNCHERS["repo"]["sh"][0].replace("{dir}", ".codeact")
SHOWN_PS = spec.LAUNCHERS["repo"]["ps"][0].replace("{dir}", ".codeact")
ROOTED = SHOWN  # "$(git rev-parse --show-toplevel)/.codeact/bin/codeact"
DEFAULT_TOOLS = ["view", "create", "edit", "glob", "grep", "outline", "bash", "sql"]
ALL_TOOLS = ["view", "create", "edit", "glob", "grep", "outline", "bash", "sql", "web_fetch", "github_api"]


def fill(text: str, *, tools: list[str], launcher: str = SHOWN, shell: str = "sh", why: str = "", tool: str = "",
         scope: str = "repo") -> str:
    """A spec text with its placeholders filled in, as the hooks do (before JSON escaping)."""
    example = spec.EXAMPLE[shell].replace("{launcher}", launcher)
    text = text.replace("{why}", why).replace("{example}", example).replace("{turn_off}", spec.TURN_OFF[scope])
    return text.replace("{launcher}", launcher).replace("{tools}", ", ".join(tools)).replace("{tool}", tool)


EXAMPLE_SH = spec.EXAMPLE["sh"].replace("{launcher}", SHOWN)
EXAMPLE_PS = spec.EXAMPLE["ps"].replace("{launcher}", SHOWN_PS)
TURN_OFF = spec.TURN_OFF["repo"]


def functions(tools: list[str], launcher: str = SHOWN) -> str:
    return spec.FUNCTIONS.replace("{tools}", ", ".join(tools)).replace("{launcher}", launcher)


def reason_tool_off(tool: str, tools: list[str] = DEFAULT_TOOLS, shell: str = "sh") -> str:
    launcher = SHOWN_PS if shell == "ps" else SHOWN
    return fill(spec.TOOL_OFF, tools=tools, tool=tool, launcher=launcher, shell=shell)


def reason_command(why: str, tools: list[str] = DEFAULT_TOOLS, shell: str = "sh") -> str:
    launcher = SHOWN_PS if shell == "ps" else SHOWN
    return fill(spec.COMMAND, tools=tools, launcher=launcher, shell=shell, why=why.replace("{launcher}", launcher))


def reason_nudge(tools: list[str] = DEFAULT_TOOLS, shell: str = "sh") -> str:
    return fill(spec.NUDGE, tools=tools, launcher=SHOWN_PS if shell == "ps" else SHOWN, shell=shell)


def for_ps1(expected: str) -> str:
    """What the PowerShell hook prints where the bash hook prints ``expected``: the reasons for a tool that is not a
    shell (nudge, tool off) show the PowerShell form there; a bash call's reasons stay as they are."""
    if not expected.startswith('{"permissionDecision":"deny"'):
        return expected
    reason = json.loads(expected)["permissionDecisionReason"]
    if not reason.startswith(("CodeAct nudge", "CodeAct exclusive mode: the ")):
        return expected
    sh_example, ps_example = EXAMPLE_SH, EXAMPLE_PS
    reason = reason.replace(sh_example, ps_example).replace(f"({SHOWN} tools lists all)", f"({SHOWN_PS} tools lists all)")
    return deny_json(reason)


def deny_json(reason: str) -> str:
    """Exactly what the hook prints to deny: one JSON object on one line, in the shape of each client (spec.OUTPUT)."""
    return spec.OUTPUT["deny"].replace("{text}", json.dumps(reason, ensure_ascii=False)[1:-1]) + "\n"


# The reasons of exclusive mode's command-line checks, by their key in the spec.
W = spec.WHY_TEXT
WHY_NOT_LAUNCHER = W["not_launcher"]
WHY_NO_COMMAND = W["no_command"]
WHY_TWO_COMMANDS = W["two_commands"]
WHY_TWO_TOOLS = W["two_tools"]
WHY_TOO_LONG = W["too_long"]


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
        decision = json.loads(self.out)
        # every client's shape says the same (VS Code reads hookSpecificOutput; the CLI the top level)
        assert decision["hookSpecificOutput"] == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                  "permissionDecisionReason": decision["permissionDecisionReason"]}
        return str(decision["permissionDecisionReason"])


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
