"""Render the hook scripts (the preToolUse hooks in bash and PowerShell, sessionStart, postToolUse) from :mod:`.spec`.

The hand-written part of each hook (reading the payload, the nudge counter, the state folder) lives beside this
module as ``hook.sh.in`` / ``hook.ps1.in``; everything the hooks decide on (tool classes, command forms, reasons)
comes from the spec as data. The sessionStart and postToolUse hooks (``session-start.sh``, ``post-tool-use.sh``)
share one skeleton, ``event.sh.in``: they only add context for the model, never deny.

Rendered when the template is stamped: each hook file of the template is one call of the Jinja global
``codeact_hook(NAME)`` (extensions/codeact.py), which renders :func:`hook_template` with the copy's answers.
``python -m codeact.enforcement.render NAME`` prints that Jinja template, to read or diff.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from . import spec

HERE = Path(__file__).resolve().parent
# The other events' scripts: file name -> the event the CLI names it by.
EVENT_FILES = {"session-start": "sessionStart", "post-tool-use": "postToolUse"}
GENERATED = "GENERATED from runtime/codeact/enforcement/spec.py when the template is stamped"


def json_text(text: str) -> str:
    """``text`` as the inside of a JSON string (the hooks print reasons as JSON)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def sh_quote(text: str) -> str:
    """A bash ``$'...'`` literal holding exactly ``text``."""
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend(f"\\x{b:02x}" for b in ch.encode())
    return "$'" + "".join(out) + "'"


def ps_quote(text: str) -> str:
    """A PowerShell single-quoted literal holding exactly ``text`` (no line breaks: patterns use ``\\n``)."""
    if "\n" in text or "\r" in text:
        raise ValueError("a PowerShell literal here must be one line")
    return "'" + text.replace("'", "''") + "'"


def ps_pattern(pattern: str) -> str:
    """A spec pattern for .NET: line breaks and tabs as regex escapes."""
    return pattern.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def _texts() -> dict[str, str]:
    """Every text a hook prints, JSON-escaped, with the placeholders the hooks fill in."""
    texts = {"command": spec.COMMAND, "tool_off": spec.TOOL_OFF, "nudge": spec.NUDGE}
    texts |= {f"example_{shell}": text for shell, text in spec.EXAMPLE.items()}
    texts |= {f"why_{why.key}": why.text for why in spec.WHY}
    return {name: json_text(text) for name, text in texts.items()}


def _smart_quotes_utf8() -> str:
    return "(" + "|".join(ch for ch in spec.PS_SMART_QUOTES) + ")"


def _installs_data() -> list[str]:
    """What every hook needs to find the other CodeAct installs and their launcher forms (installs.sh.in)."""
    lines = [f"launcher_mark={sh_quote(spec.LAUNCHER_MARK)}",
             "scope_forms() { # scope_forms SCOPE SHELL: REPLY_ALL = the spec's launcher forms of SCOPE for SHELL",
             "  case $1-$2 in"]
    for scope, forms in spec.LAUNCHERS.items():
        for shell in ("sh", "ps"):
            lines.append(f"    {scope}-{shell}) REPLY_ALL=(" + " ".join(sh_quote(f) for f in forms[shell]) + ") ;;")
    lines += ["    *) REPLY_ALL=() ;;", "  esac", "}"]
    return lines


def _body(name: str, data: str) -> str:
    """A hand-written hook part with its data and the shared parts filled in."""
    text = (HERE / name).read_text(encoding="utf-8")
    text = text.replace("@@MAX_READ@@", str(spec.MAX_PAYLOAD_READ))
    text = text.replace("@@INSTALLS@@", (HERE / "installs.sh.in").read_text(encoding="utf-8").rstrip("\n"))
    return text.replace("@@DATA@@", data)


def render_sh_data() -> str:
    lines = [
        f"read_tools={sh_quote(' ' + ' '.join(spec.READ_TOOLS) + ' ')}",
        f"housekeeping={sh_quote(' ' + ' '.join(spec.HOUSEKEEPING_TOOLS) + ' ')}",
        f"nudge_after={spec.NUDGE_AFTER} pointer_mark={sh_quote(spec.POINTER_MARK)}",
        f"max_command_bytes={spec.MAX_COMMAND_BYTES}",
        f"output_deny={sh_quote(spec.OUTPUT['deny'])}",
        *_installs_data(),
        "shell_of() { # shell_of TOOL: shell = sh, ps, or '' for a tool that is not a shell",
        "  case $1 in",
    ]
    for shell in ("sh", "ps"):
        names = [name for name, s in spec.SHELL_TOOLS.items() if s == shell]
        names += list(spec.TERMINAL_TOOLS) if shell == "sh" else []  # the terminal is this hook's own shell
        lines.append(f"    {' | '.join(names)}) shell='{shell}' ;;")
    lines += ["    *) shell='' ;;", "  esac", "}", "case $scope in"]
    for scope, forms in spec.LAUNCHERS.items():
        sh = " ".join(sh_quote(f) for f in forms["sh"])
        lines.append(f"  {scope}) sh_launchers=({sh}) "
                     f"turn_off_text={sh_quote(json_text(spec.TURN_OFF[scope]))} ;;")
    lines.append("esac")
    for key in ("shell", "name", "pattern", "forbid"):
        values = [getattr(form, "body_forbid" if key == "forbid" else key) for form in spec.FORMS]
        lines.append(f"form_{key}=(" + " ".join(sh_quote(v) for v in values) + ")")
    lines.append(f"protected={sh_quote(spec.protected_value_pattern())}")
    lines.append(f"nul_escape={sh_quote(spec.NUL_ESCAPE)}")
    lines.append(f"smart_quotes={sh_quote(_smart_quotes_utf8())}")
    lines.append(f"smart_quote_escapes={sh_quote(spec.smart_quote_escapes())}")
    for why in spec.WHY:
        if why.pattern:
            lines.append(f"pat_{why.key}={sh_quote(why.pattern)}")
    for name, text in _texts().items():
        lines.append(f"{'text_' + name if not name.startswith(('why_', 'example_')) else name}={sh_quote(text)}")
    return "\n".join(lines)


def render_ps_data() -> str:
    def arr(items: list[str] | tuple[str, ...], quote: Callable[[str], str] = ps_quote) -> str:
        return "@(" + ", ".join(quote(i) for i in items) + ")"

    lines = [
        f"$ReadTools = {arr(spec.READ_TOOLS)}",
        f"$Housekeeping = {arr(spec.HOUSEKEEPING_TOOLS)}",
        f"$NudgeAfter = {spec.NUDGE_AFTER}",
        f"$MaxCommandBytes = {spec.MAX_COMMAND_BYTES}",
        f"$MaxPayloadRead = {spec.MAX_PAYLOAD_READ}",
        "$ShellOf = @{ " + "; ".join(f"{ps_quote(k)} = {ps_quote(v)}" for k, v in {
            **spec.SHELL_TOOLS, **dict.fromkeys(spec.TERMINAL_TOOLS, "ps")}.items()) + " }",
        f"$OutputDeny = {ps_quote(spec.OUTPUT['deny'])}",
        "$Launchers = @{",
    ]
    for scope, forms in spec.LAUNCHERS.items():
        lines.append(f"  {ps_quote(scope)} = @{{ 'sh' = {arr(forms['sh'])}; 'ps' = {arr(forms['ps'])}; "
                     f"'turn_off' = {ps_quote(json_text(spec.TURN_OFF[scope]))} }}")
    lines.append("}")
    lines.append("$Forms = @(")
    for form in spec.FORMS:
        lines.append(f"  @{{ 'shell' = {ps_quote(form.shell)}; 'name' = {ps_quote(form.name)}; "
                     f"'pattern' = {ps_quote(ps_pattern(form.pattern))}; "
                     f"'forbid' = {ps_quote(ps_pattern(form.body_forbid))} }}")
    lines.append(")")
    lines.append(f"$Protected = {ps_quote(spec.protected_value_pattern())}")
    lines.append(f"$NulEscape = {ps_quote(spec.NUL_ESCAPE)}")
    smart = "[" + "".join(f"\\u{ord(c):04X}" for c in spec.PS_SMART_QUOTES) + "]"
    lines.append(f"$SmartQuotes = {ps_quote(smart)}")
    lines.append(f"$SmartQuoteEscapes = {ps_quote(spec.smart_quote_escapes())}")
    lines.append("$Pat = @{ " + "; ".join(f"{ps_quote(w.key)} = {ps_quote(ps_pattern(w.pattern))}"
                                          for w in spec.WHY if w.pattern) + " }")
    lines.append("$Text = @{")
    for name, text in _texts().items():
        lines.append(f"  {ps_quote(name)} = {ps_quote(text)}")
    lines.append("}")
    return "\n".join(lines)


SH_HEADER = """#!/usr/bin/env bash
# codeact preToolUse hook (owned by the codeact Copier template; regenerated by `copier update`).
# {generated}: edit the spec, not this file.
# The CLI runs it before EVERY tool call (the call as JSON on stdin) and denies the call when it prints a deny
# decision. FAIL-SAFE: every path exits 0 (a non-zero exit denies); what it cannot read allows. No forks.
#   CODEACT_MODE=off|nudge|exclusive overrides the stamped mode; CODEACT_DEBUG=1|/abs/path.log logs decisions.
# State: $XDG_RUNTIME_DIR/codeact-<uid>, else ${{TMPDIR:-/tmp}}/codeact-<uid> (0700). nudge: deny the read after
# {after} read-only calls in a row; exclusive: only housekeeping tools and the launcher in one of the spec's forms.
if [ -z "${{BASH_VERSION:-}}" ]; then
  if [ -f {{{{ hook_script }}}} ] && command -v bash >/dev/null 2>&1; then
    exec bash {{{{ hook_script }}}}
  fi
  exit 0
fi
stamped_mode='{{{{ enforcement }}}}'
scope='{{{{ scope }}}}'
tools_list='{{{{ tools | join(", ") }}}}'{{% raw %}}
"""

PS_HEADER = """# codeact preToolUse hook for PowerShell (owned by the codeact Copier template; regenerated by `copier update`).
# {generated}: edit the spec, not this file.
# .github/hooks/codeact.json registers it as the `powershell` entry; it decides exactly as pre-tool-use.sh does.
# FAIL-SAFE: every path exits 0 (a non-zero exit makes the CLI deny the call); anything it cannot read allows.
#   $env:CODEACT_MODE = off | nudge | exclusive   overrides the stamped mode; any other value allows everything
#   $env:CODEACT_DEBUG = 1 | C:\\abs\\path.log        log decisions (default <state>\\debug.log)
$StampedMode = '{{{{ enforcement }}}}'
$Scope = '{{{{ scope }}}}'
$ToolsList = '{{{{ tools | join(", ") }}}}'{{% raw %}}
"""


def render_event_data(event: str) -> str:
    """The data block of the sessionStart / postToolUse script for ``event``."""
    lines = [f"event={sh_quote(event)}", f"output_event={sh_quote(spec.OUTPUT[event])}",
             f"read_tools={sh_quote(' ' + ' '.join(spec.READ_TOOLS) + ' ')}",
             f"full_run={sh_quote('x' * spec.NUDGE_AFTER)} pointer_mark={sh_quote(spec.POINTER_MARK)}",
             *_installs_data(),
             f"speaker_order={sh_quote(' ' + ' '.join(spec.SPEAKER_ORDER) + ' ')}",
             "case $scope in"]
    for scope, forms in spec.LAUNCHERS.items():
        lines.append(f"  {scope}) sh_launchers=(" + " ".join(sh_quote(f) for f in forms["sh"]) + ") ;;")
    lines.append("esac")
    texts = {"example_sh": spec.EXAMPLE["sh"], "text_pointer": spec.POINTER, "text_session_fresh": spec.SESSION_FRESH,
             "text_session_installs": spec.SESSION_INSTALLS}
    texts |= {f"text_session_{mode}": text for mode, text in spec.SESSION.items()}
    lines += [f"{name}={sh_quote(json_text(text))}" for name, text in texts.items()]
    return "\n".join(lines)


EVENT_HEADER = """#!/usr/bin/env bash
# codeact {event} hook (owned by the codeact Copier template; regenerated by `copier update`).
# {generated}: edit the spec, not this file.
# It only adds context for the model ({{"additionalContext": ...}} on stdout), never denies; every path exits 0.
#   CODEACT_MODE=off|nudge|exclusive overrides the stamped mode (off: it prints nothing).
if [ -z "${{BASH_VERSION:-}}" ]; then
  if [ -f {{{{ hook_script | replace('pre-tool-use', '{name}') }}}} ] && command -v bash >/dev/null 2>&1; then
    exec bash {{{{ hook_script | replace('pre-tool-use', '{name}') }}}}
  fi
  exit 0
fi
stamped_mode='{{{{ enforcement }}}}'
scope='{{{{ scope }}}}'
tools_list='{{{{ tools | join(", ") }}}}'{{% raw %}}
"""


def render_event(name: str) -> str:
    """The generated script ``<name>.sh`` (a key of :data:`EVENT_FILES`)."""
    event = EVENT_FILES[name]
    body = _body("event.sh.in", render_event_data(event))
    return (EVENT_HEADER.format(event=event, name=name, generated=GENERATED) + body.rstrip("\n")
            + "{% endraw %}\n")


def render_sh() -> str:
    body = _body("hook.sh.in", render_sh_data())
    return SH_HEADER.format(generated=GENERATED, after=spec.NUDGE_AFTER) + body.rstrip("\n") + "{% endraw %}\n"


def render_ps() -> str:
    body = _body("hook.ps1.in", render_ps_data())
    return PS_HEADER.format(generated=GENERATED) + body.rstrip("\n") + "{% endraw %}\n"


def _templates() -> dict[str, Callable[[], str]]:
    events = {f"{name}.sh": functools.partial(render_event, name) for name in EVENT_FILES}
    return {"pre-tool-use.sh": render_sh, "pre-tool-use.ps1": render_ps, **events}


HOOK_NAMES = ("pre-tool-use.sh", "pre-tool-use.ps1", *(f"{name}.sh" for name in EVENT_FILES))


def hook_template(name: str) -> str:
    """The Jinja template of the hook script ``name`` (one of :data:`HOOK_NAMES`): the stamp renders it with the
    answers (enforcement, scope, tools, hook_script)."""
    try:
        make = _templates()[name]
    except KeyError:
        raise ValueError(f"no hook named {name!r}: one of {', '.join(HOOK_NAMES)}") from None
    return make()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codeact.enforcement.render", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=HOOK_NAMES, help="the hook whose Jinja template to print")
    args = parser.parse_args(argv)
    sys.stdout.write(hook_template(args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
