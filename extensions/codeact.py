"""Jinja extensions of the codeact template: the vendored runtime's files, and tool docs from the runtime itself.

Loaded by copier-template-extensions from the template copy being rendered, so every function here sees the
runtime of THAT template version (``copier update`` renders two versions in one process; each gets its own copy of
the runtime module under a private name).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from jinja2 import pass_context
from jinja2.ext import Extension

TEMPLATE_ROOT = Path(__file__).resolve().parent.parent
RUNTIME_ROOT = TEMPLATE_ROOT / "runtime"
_SKIP_PARTS = {"__pycache__"}
# A private module name per template copy: `copier update` renders two template versions in one process.
_RUNTIME_MODULE = "_codeact_template_runtime_" + hashlib.sha1(str(RUNTIME_ROOT).encode()).hexdigest()[:10]


def runtime_files() -> list[str]:
    """Every file of the runtime package, as POSIX paths relative to ``runtime/`` (sorted)."""
    return sorted(
        p.relative_to(RUNTIME_ROOT).as_posix()
        for p in (RUNTIME_ROOT / "codeact").rglob("*")
        if p.is_file() and not _SKIP_PARTS & set(p.parts) and p.suffix != ".pyc"
    )


def runtime_source(relpath: str) -> str:
    """The exact text of one runtime file (not rendered as Jinja)."""
    path = (RUNTIME_ROOT / relpath).resolve()
    if not path.is_relative_to(RUNTIME_ROOT):
        raise ValueError(f"{relpath} is outside the runtime")
    return path.read_text(encoding="utf-8")


def load_runtime() -> ModuleType:
    """The ``codeact`` package of this template copy, imported under a private name."""
    name = _RUNTIME_MODULE
    if name in sys.modules:
        return sys.modules[name]
    init = RUNTIME_ROOT / "codeact" / "__init__.py"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _submodule(name: str) -> Any:
    load_runtime()
    return importlib.import_module(f"{_RUNTIME_MODULE}.{name}")


def tool_docs(tools: list[str]) -> list[dict[str, str]]:
    """For each enabled built-in tool, in catalog order: its name, signature and one-line description."""
    catalog = _submodule("core.catalog")
    stubs = _submodule("core.stubs")
    docs = []
    for name in catalog.BUILTINS:
        if name in tools:
            tool = _submodule("tools.assemble").builtin_tool(name, None)
            docs.append({"name": name, "signature": stubs.signature(tool), "description": tool.description.replace("``", "`")})
    return docs


def risky_tools(tools: list[str]) -> dict[str, str]:
    """The chosen tools that act on the host or the network, with what they do."""
    return {name: why for name, why in _submodule("core.catalog").RISKY_TOOLS.items() if name in tools}


def mcp_servers_found(dst_path: Any) -> list[str]:
    """Names of the MCP servers configured in the destination repository (for the interview's help text)."""
    try:
        loaded = _submodule("mcp.config").load_servers(Path(str(dst_path)))
    except Exception:  # noqa: BLE001 - a broken config must not break the interview; discovery reports it
        return []
    return sorted(name for name, server in loaded.servers.items() if server.scope == "workspace")



def mcp_section(dst_path: Any, exclude: list[str], launcher: str) -> str:
    """The generated MCP section, from the destination's tool lock (empty section when there is none yet)."""
    try:
        lock = _submodule("mcp.lock").read_lock(Path(str(dst_path)))
    except Exception:  # noqa: BLE001 - an unreadable lock renders as "none"; `codeact refresh` rewrites it
        lock = None
    return str(_submodule("lifecycle.refresh").mcp_section(lock, launcher, exclude or ()))


def limits() -> dict[str, str]:
    """The runtime's default limits as the stamped instructions write them (``core.limits.Limits.described``)."""
    return dict(_submodule("core.limits").Limits().described())


def runtime_version() -> str:
    return str(load_runtime().__version__)


def scope_paths(scope: str) -> dict[str, str]:
    """Where ``scope`` puts each kind of file (copier.yml's computed answers), from the runtime's layout."""
    layout = _submodule("layout")
    return dict(layout.for_scope(scope).paths()) if scope in layout.SCOPES else {}


def install_manifest(scope: str, answers: Any) -> str:
    """``.codeact/manifest.json``: what a stamp with these answers writes (the runtime's ``layout.manifest``)."""
    return str(_submodule("layout").manifest_text(scope, dict(answers or {})))


@functools.lru_cache(maxsize=1)
def _org_policy() -> Any:
    """This template copy's ``codeact-policy.yml`` (read once)."""
    return _submodule("lifecycle.orgpolicy").load_policy(TEMPLATE_ROOT)


def valid_choices(question: str) -> tuple[str, ...]:
    """The values the runtime accepts for ``question`` (one source for copier.yml's validators and the CLI)."""
    if question == "tools":
        catalog = _submodule("core.catalog")
        return tuple(name for name in catalog.BUILTINS if name not in catalog.ALWAYS_TOOLS)
    if question == "backend":
        return tuple(_submodule("core.config").BACKENDS)
    if question == "enforcement":
        return tuple(_submodule("enforcement.spec").MODES)
    raise ValueError(f"no runtime list of choices for {question!r}")


def choice_error(question: str, answer: Any) -> str:
    """Why ``answer`` is not a value the runtime accepts for ``question`` ("" when it is)."""
    valid = valid_choices(question)
    answers = list(answer) if isinstance(answer, (list, tuple)) else [answer]
    if question == "tools" and not answers:
        return "choose at least one tool"
    bad = [str(a) for a in answers if a not in valid]
    return f"unknown {question} {', '.join(map(repr, bad))}; valid: {', '.join(valid)}" if bad else ""


@pass_context
def org_policy_error(context: Any, question: str, answer: Any) -> str:
    """Why ``answer`` breaks this template's ``codeact-policy.yml`` ("" when it does not, or there is none).

    Not in the temporary copies of an update: the old version's copy re-renders the recorded answers as they are
    (a hand-edited answer that breaks the policy would fail the update for ever); the real destination checks the
    answers, and Copier replaces a recorded answer that fails there with the policy's default."""
    if copier_operation() == "update":
        conf = context.get("_copier_conf")
        try:
            dst = conf["dst_path"] if conf is not None else None
        except (KeyError, TypeError):
            dst = None
        if dst is not None and not _submodule("lifecycle.update").is_real_destination(dst):
            return ""
    return str(_org_policy().violation(question, answer))


def org_default(question: str, fallback: Any) -> Any:
    """The question's default brought within ``codeact-policy.yml`` (a list renders as a YAML flow list)."""
    value = _org_policy().default(question, fallback)
    return "[" + ", ".join(str(v) for v in value) + "]" if isinstance(value, (list, tuple)) else value


def copier_operation() -> str:
    """"copy" or "update": what Copier is doing (its context variable; questions cannot see ``_copier_operation``)."""
    for module in ("copier._main", "copier.main"):
        try:
            return str(importlib.import_module(module)._operation.get("copy"))
        except (ImportError, AttributeError):
            continue
    return "copy"


def seed_here(dst_path: Any, path: str) -> bool:
    """Whether this render writes the seeded file ``path`` (never in an update's temporary copies; not again once
    the user deleted it)."""
    return bool(_submodule("lifecycle.update").seed_here(dst_path, copier_operation(), path))


def local_source(src: Any) -> bool:
    """Whether the template source is a folder of this machine, which a CI runner cannot clone."""
    return isinstance(src, str) and bool(_submodule("lifecycle.orgpolicy").is_local_source(src))


def copier_on_path() -> bool:
    """Whether a ``copier`` command is on PATH (not so after ``uvx ... copier copy``): the printed commands need one."""
    import shutil

    return shutil.which("copier") is not None


def recorded_answers(answers: Any, conf: Any) -> dict[str, Any]:
    """What the answers file records: Copier's answers, with ``_commit`` the tag asked for (or the newest release)
    when another tag of the same commit would be recorded (the runtime's ``update.recorded_commit``)."""
    data = dict(answers or {})
    if data.get("_commit"):
        data["_commit"] = _submodule("lifecycle.update").recorded_commit(conf["src_path"], data["_commit"],
                                                                         conf["vcs_ref"])
    return data


def update_report(dst_path: Any) -> str:
    """Copier's message after an update: what changed and which conflicts are left."""
    return str(_submodule("lifecycle.update").update_report(dst_path))


def _answer_errors_without_traceback() -> None:
    """Copier raises a bad ``-d``/``--data-file`` answer (an invalid choice, a failed validator) as a bare
    ``ValueError``, which its CLI prints as a traceback. Re-raise it as an error that is also Copier's
    ``UserMessageError``: the CLI prints the message and exits 1; an interactive prompt still shows it inline."""
    try:
        from copier import errors
        from copier._user_data import Question
    except ImportError:  # another Copier layout: keep its own behaviour
        return
    if getattr(Question, "_codeact_friendly", False):
        return

    class AnswerError(errors.UserMessageError, ValueError):
        """A refused answer, shown without a traceback."""

    def wrap(method: Any) -> Any:
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except AnswerError:
                raise
            except ValueError as exc:
                text = str(exc)
                if text.startswith("Invalid choice for "):
                    text = f"Validation error for question '{self.var_name}': " + text.split(": ", 1)[-1]
                raise AnswerError(text) from exc
        return checked

    for name in ("parse_answer", "validate_answer"):
        if hasattr(Question, name):
            setattr(Question, name, wrap(getattr(Question, name)))
    Question._codeact_friendly = True  # type: ignore[attr-defined]  # marks the patch as applied


def copilot_home() -> Path:
    """``$COPILOT_HOME``, else ``~/.copilot``, resolved (the runtime's ``paths.copilot_home``)."""
    return Path(_submodule("paths").copilot_home()).resolve()


def copilot_home_clash(dst_path: Any) -> str:
    """Why ``dst_path`` cannot hold a global-scope install ("" when it can): it must not be in ``$COPILOT_HOME``,
    which holds tokens and sessions and must never become (part of) a git repository, nor contain it."""
    dst = Path(str(dst_path)).expanduser().resolve()
    home = copilot_home()
    if dst == home or home in dst.parents:
        return (f"the destination {dst} is inside $COPILOT_HOME ({home}), which holds tokens and sessions and must "
                "never become a git repository; stamp into a folder you keep in git (e.g. your dotfiles "
                "repository, or ~/.config/codeact-global) and `codeact link` links the files into it")
    if dst in home.parents:
        return (f"the destination {dst} contains $COPILOT_HOME ({home}): git would see your Copilot tokens and "
                "sessions; choose a folder outside it (e.g. ~/.config/codeact-global)")
    return ""


def repo_root_error(dst_path: Any) -> str:
    """Why a repo-scope COPY into ``dst_path`` is refused: a subfolder of a git repository ("" otherwise)."""
    if copier_operation() != "copy":
        return ""
    return str(_submodule("lifecycle.gitrules").repo_root_error(Path(str(dst_path))))


def stamp_warnings(dst_path: Any, scope: str) -> str:
    """Lines for the message after copy: owned files the repository's ignore rules hide, and a repo-scope stamp
    outside a git work tree."""
    gitrules = _submodule("lifecycle.gitrules")
    dst = Path(str(dst_path))
    if gitrules.top_level(dst) is None:
        return ("WARNING: this folder is not a git work tree: the instructed command runs "
                "`git rev-parse --show-toplevel`, and Copilot reads .github/ only in one. Run `git init` here "
                "(then commit), or stamp into your repository's top level.") if scope == "repo" else ""
    lines = [f"WARNING: {path} is ignored by git; {gitrules.ignored_fix(path, rule)}"
             for path, rule in gitrules.ignored_owned(dst)]
    return "\n".join(lines)


class CodeactExtension(Extension):
    """Registers the functions above as Jinja globals."""

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        _answer_errors_without_traceback()
        environment.globals.update(
            runtime_files=runtime_files(),
            runtime_source=runtime_source,
            tool_docs=tool_docs,
            risky_tools=risky_tools,
            runtime_version=runtime_version,
            limits=limits(),
            mcp_servers_found=mcp_servers_found,
            mcp_section=mcp_section,
            scope_paths=scope_paths,
            install_manifest=install_manifest,
            copilot_home_clash=copilot_home_clash,
            org_policy_error=org_policy_error,
            choice_error=choice_error,
            org_default=org_default,
            seed_here=seed_here,
            update_report=update_report,
            recorded_answers=recorded_answers,
            local_source=local_source,
            copier_on_path=copier_on_path,
            repo_root_error=repo_root_error,
            stamp_warnings=stamp_warnings,
        )


# --- hooks rendered when the template is stamped (issue 46.3) --------------------------------------------------------
# Each hook file under template/{{ codeact_dir }}/hooks/ is one call of this global: the runtime of THIS template copy
# renders the script from its enforcement spec, and the result is rendered as Jinja with the copy's answers.
@pass_context
def codeact_hook(context: Any, name: str) -> str:
    """The hook script ``name`` (pre-tool-use.sh, pre-tool-use.ps1, session-start.sh, post-tool-use.sh)."""
    text = _submodule("enforcement.render").hook_template(name)
    script = str(context.environment.from_string(text).render(context.get_all()))
    if name.endswith(".ps1"):
        # As the owned .gitattributes checks it out (`*.ps1 text eol=crlf`): an LF render differs from every
        # checkout, and `copier update` then merges a CRLF file with LF versions (a whole-file conflict).
        script = script.replace("\r\n", "\n").replace("\n", "\r\n")
    return script


def agent_tools() -> list[str]:
    """The custom agent's `tools:`, the terminal tool of every client (issue 43.2), from the enforcement spec."""
    return list(_submodule("enforcement.spec").AGENT_TOOLS)


class HooksExtension(Extension):
    """Registers :func:`codeact_hook` and :func:`agent_tools` as Jinja globals."""

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        environment.globals.update(codeact_hook=codeact_hook, agent_tools=agent_tools)
