"""npm's, pnpm's, yarn's and make's options, parsed as those tools parse them: the folder, file or workspace a
runner reads, and whether a command installs packages."""
from __future__ import annotations

import os
import re

from .bounds import Unread
from .names import EVERY_WORKSPACE, INSTALL, INSTALLS, LONG_OPTIONS, MAKE_VALUED, SEPARATOR, VALUED

# npm's config as nopt reads it (npm 11, @npmcli/config's definitions): the options that take the next word (a
# String's only where it does not start with `-x`), and those that do not (a Boolean's takes only `true`/`false`);
# an abbreviation reads as the one name it starts (`--loglev`). Shorthands: `-C` is --prefix, `-w` --workspace...
_NPM_STRINGS = frozenset((
    "call diff-dst-prefix diff-src-prefix editor git heading init-author-email init-author-name init-license "
    "init-type init.author.email init.author.name init.license message pack-destination preid save-prefix scope "
    "searchexclude searchopts shell tag tag-version-prefix user-agent viewer").split())
_NPM_VALUED = frozenset((
    "_auth access allow-directory allow-file allow-git allow-remote allow-scripts also audit-level auth-type before "
    "ca cache cache-max cache-min cafile cert cidr cpu depth diff diff-unified expect-result-count expires "
    "fetch-retries fetch-retry-factor fetch-retry-maxtimeout fetch-retry-mintimeout fetch-timeout globalconfig "
    "https-proxy include init-author-url init-module init-version init.author.url init.module init.version "
    "install-strategy key libc local-address location lockfile-version loglevel logs-dir logs-max name maxsockets "
    "min-release-age min-release-age-exclude node-gyp node-options noproxy omit only orgs os otp package packages "
    "prefix provenance-file proxy registry replace-registry-host sbom-format sbom-type scopes "
    "packages-and-scopes-permission orgs-permission password token-description script-shell searchlimit "
    "searchstaleness umask userconfig which workspace").split()) | _NPM_STRINGS
_NPM_FLAGS = frozenset((
    "all allow-same-version audit bin-links browser bypass-2fa color commit-hooks dangerously-allow-all-scripts "
    "description dev diff-ignore-all-space diff-name-only diff-no-prefix diff-text dry-run engine-strict "
    "expect-results force foreground-scripts format-package-lock fund git-tag-version global global-style if-present "
    "ignore-scripts include-staged include-workspace-root include-attestations init-private install-links json "
    "legacy-bundling legacy-peer-deps link long offline omit-lockfile-registry-resolved optional package-lock "
    "package-lock-only parseable allow-scripts-pending allow-scripts-pin prefer-dedupe prefer-offline prefer-online "
    "production progress provenance read-only rebuild-bundle save save-bundle save-dev save-exact save-optional "
    "save-peer save-prod packages-all shrinkwrap sign-git-commit sign-git-tag strict-peer-deps strict-allow-scripts "
    "strict-ssl timing unicode update-notifier usage version versions workspaces workspaces-update yes").split())
_NPM_NAMES = tuple(sorted(_NPM_VALUED | _NPM_FLAGS))
# npm's shorthands that stand for an option taking the next word (the others are flags, or carry their value:
# `-s` is `--loglevel silent`); `-p` is npx's --package (npm's --parseable: read as npx's, the safe side)
_NPM_SHORT = {"C": "prefix", "w": "workspace", "L": "location", "m": "message", "c": "call", "p": "package",
              "reg": "registry", "enjoy-by": "before"}
# npm's options that name a program npm runs or a file it reads settings from (NODE_OPTIONS, the shell running
# scripts, node-gyp, another .npmrc): as their npm_config_* variables, a hooks file setting one is Unread
_NPM_RUNS = frozenset(("node-options", "script-shell", "shell", "node-gyp", "userconfig", "globalconfig", "git",
                       "editor", "init-module"))
# npm commands that reify no tree (run no lifecycle script of a package they install, rebuild or link): every other
# npm command is read as an install (`dedupe`, `prune`, `uninstall`, `audit fix`, `edit`, a new one...)
_NPM_READS = frozenset((
    "run run-script rum urn test t tst start stop restart exec x view v info show ls list ll la pkg config c get set "
    "help help-search hlep prefix root search find s se whoami ping login logout adduser add-user owner author "
    "access token team org ogr profile star stars unstar deprecate undeprecate dist-tag dist-tags docs home bugs "
    "issues repo outdated explain why fund doctor query sbom cache completion diff find-dupes version verison "
    "audit pack publish").split())


_NPM_SINGLES = frozenset("dqsnacfgLlmpCSBDEOP?Hhvwy")  # npm's one-letter shorthands, which a `-sC` group joins
_NPM_SHORT_FLAGS = frozenset((*(_NPM_SINGLES - {"C", "w", "L", "m", "c", "p"}), "dd", "ddd", "quiet", "silent",
                              "verbose", "desc", "help", "local", "no", "porcelain", "readonly", "iwr", "ws"))
_DASHES = re.compile(r"-{2,}")


def _npm_option(word: str) -> str:
    """The npm option ``word`` (its ``=value`` cut off) as nopt names it: a shorthand's option (``-C``: prefix), the
    last of a group of one-letter shorthands (``-sC``: prefix), the one name an abbreviation starts (``--loglev``);
    otherwise the word without its dashes (a flag nopt does not know, or a ``no-`` negation: takes no value)."""
    name = word.split("=", 1)[0].lstrip("-")
    if name in _NPM_SHORT:
        return _NPM_SHORT[name]
    if name in _NPM_VALUED or name in _NPM_FLAGS or name.startswith("no-"):
        return name
    if name in _NPM_SHORT_FLAGS:  # `-f` (--force), `-s` (--loglevel silent): no value of the next word
        return "-" + name
    if not word.startswith("--") and len(name) > 1 and set(name) <= _NPM_SINGLES:
        return _NPM_SHORT.get(name[-1], "-" + name[-1])
    longer = [known for known in _NPM_NAMES if known.startswith(name)] if name else []
    return longer[0] if len(longer) == 1 else name


def _npm_value_next(word: str, following: str | None) -> bool:
    """Whether npm (nopt) reads ``following``, the word after its option ``word``, as that option's value: always
    for an option that takes one (a String's not where it starts ``-x``), never past ``--`` or after ``=``; a
    flag's only ``true``, ``false`` (``null``, ``always``; browser's any word not starting ``-x``)."""
    if following is None or "=" in word or _DASHES.fullmatch(following) or _DASHES.fullmatch(word):
        return False
    name = _npm_option(word)
    if name in _NPM_VALUED:
        return name not in _NPM_STRINGS or not re.match(r"-{1,2}[^-]", following)
    return following in ("true", "false", "null", "always") or (
        name.removeprefix("no-") == "browser" and not re.match(r"-[^-]", following))


def _check_npm_option(word: str) -> None:
    """:class:`Unread` for an option of npm (pnpm, yarn, bun: the same names) that names what it runs or reads
    first (``--node-options=--require=x``: NODE_OPTIONS for every script), as its ``npm_config_*`` variable."""
    if word.startswith("-") and not _DASHES.fullmatch(word) and (name := _npm_option(word)) in _NPM_RUNS:
        raise Unread(f"npm's --{name} names what npm runs or reads first (npm_config_{name.replace('-', '_')}), "
                     "which CodeAct does not follow")


def subcommand_of(words: list[str], start: int) -> str:
    """The first word of ``words[start:]`` that is no option nor an option's value (as npm reads its options, see
    :func:`_npm_value_next`), up to the command's end ("" if none)."""
    index = start
    while index < len(words) and index < start + 32:
        word = words[index]
        index += 1
        if set(word) <= SEPARATOR:
            return ""
        if _DASHES.fullmatch(word):
            return words[index].lower() if index < len(words) and not set(words[index]) <= SEPARATOR else ""
        if not word.startswith("-"):
            return word.lower()
        index += _npm_value_next(word, words[index] if index < len(words) else None)
    return ""


def package_folders(words: list[str], start: int) -> list[str]:
    """The package folders ``npx``, ``npm exec``, ``pnpm dlx``, ``bunx`` run from the path specs of
    ``words[start:]``: its ``--package``/``-p`` values and the first word that is no option nor an option's value
    (npm's, :func:`_npm_value_next`: ``--prefix dir``, ``--loglevel error``), the command after ``exec``/``dlx``,
    where one is a folder or tarball as npm-package-arg reads it (:func:`folder_spec`: ``./tool``, ``file:x``,
    ``x@./tool``): every file below each (its ``package.json`` picks the ``bin`` it runs)."""
    specs: list[str] = []
    index = start
    options = True
    while index < len(words) and index < start + 64 and not set(words[index]) <= SEPARATOR:
        word = words[index]
        index += 1
        if options and _DASHES.fullmatch(word):
            options = False
        elif options and word.startswith("-"):
            _check_npm_option(word)
            following = words[index] if index < len(words) else None
            if _npm_option(word) == "package":
                if "=" in word:
                    specs.append(word.split("=", 1)[1])
                elif following is not None:
                    specs.append(following)
                    index += 1
            else:
                index += _npm_value_next(word, following)
        elif word.lower() not in ("exec", "x", "dlx") or specs or not options:
            specs.append(word)
            break
    found: list[str] = []
    for given in specs:
        spec = folder_spec(given)
        if spec is not None and spec.lower().endswith((".tgz", ".tar.gz", ".tar")):
            found.append(spec)
        elif spec is not None:
            found += [os.path.join(spec, "package.json"), os.path.join(spec, "**")]
    return found


_NPM_URL = re.compile(r"(?:git\+)?[a-z]+:", re.IGNORECASE)
_NPM_GIT = re.compile(r"[^@]+@[^:.]+\.[^:]+:.+", re.IGNORECASE)
_GITHUB_SHORT = re.compile(r"[^:@%/\s.-][^:@%/\s]*/[^:@\s/%]+(?:#.*)?")


def folder_spec(given: str) -> str | None:
    """The folder (or tarball) the package spec ``given`` names, as npm-package-arg reads it: ``name@spec`` split at
    the first ``@`` after a scope's, then ``file:x`` (any case), a spec starting ``.``, ``/``, ``~/`` or a drive, a
    tarball name, a path of slashes that is no GitHub ``user/repo``; a word starting ``$`` too (a folder named by a
    variable) and Windows' ``.\\``. None for a registry name, a URL, a git spec."""
    at = given.find("@", 1)
    head = given[:at] if at > 0 else given
    spec = given
    if _NPM_GIT.fullmatch(given) and not _NPM_URL.match(given):
        return None
    if _NPM_URL.match(given) or (not head.startswith("@") and (
            "/" in head or "\\" in head or head.lower().endswith((".tgz", ".tar.gz", ".tar")))):
        pass
    elif at > 0:
        spec = given[at + 1:]
    if spec.lower().startswith("file:"):
        return spec[5:] or "."
    if _NPM_URL.match(spec) and not re.match(r"[a-zA-Z]:", spec):
        return None
    if (spec.startswith((".", "/", "~/", "$", "\\")) or re.match(r"[a-zA-Z]:", spec)
            or spec.lower().endswith((".tgz", ".tar.gz", ".tar")) or spec.endswith(("/", "\\"))
            or (("/" in spec or "\\" in spec) and not _GITHUB_SHORT.fullmatch(spec))):
        return spec
    return None


def runner_options(words: list[str], start: int, make: bool = False, manager: str = "npm") -> list[tuple[str, str]]:
    """The words after make (``make``) or npm (``manager``: pnpm, yarn, bun) up to the command's end, as ``(option,
    value)``: ``-C dir``, ``-Cdir``, ``--directory=dir`` give ``("-c", "dir")`` (names case-folded); a plain word
    ``("", word)``; ``-f x`` and ``-w x`` take the next word too. In a group of short flags (``-sC dir``) the first
    that takes a value takes the rest or the next word: make's ``C``, ``f``, ``I``, ``o``, ``W`` (``j``, ``l``,
    ``O`` only the rest), npm's ``C``, ``w``; pnpm's ``--filter x``/``-F x`` and yarn's ``workspace x`` name a
    workspace. npm's options are read as nopt reads them (:func:`_npm_value_next`: ``--loglevel error``). The
    command (the first plain word) is an install (:data:`INSTALL` and every workspace, ``("-w", "**")``) for npm
    unless it is one that reifies no tree (:data:`_NPM_READS`, :func:`_installs`), for the others where :data:`INSTALLS` holds it,
    and for a bare ``yarn`` (yarn's install). :class:`Unread` for an option naming what npm runs
    (:func:`_check_npm_option`)."""
    found: list[tuple[str, str]] = []
    index = start
    command = ""
    while index < len(words) and len(found) < 64:
        word = words[index]
        index += 1
        if word and set(word) <= SEPARATOR:
            break
        if not word.startswith("-") or (not make and _DASHES.fullmatch(word)):
            first = not make and not command
            if _DASHES.fullmatch(word):  # `npm -- ci`: the command; `npm run x -- --y`: the script's, no option
                if not first or index >= len(words) or set(words[index]) <= SEPARATOR:
                    ends = next((n for n in range(index, len(words)) if set(words[n]) <= SEPARATOR), len(words))
                    found += [("", later) for later in words[index:ends][:64]]
                    break
                word = words[index]
                index += 1
            command = command or word
            index = _plain_word(words, index, word, first, manager, found)
            continue
        key, equals, value = word.partition("=")
        low = key.lower()
        if not make and (low in EVERY_WORKSPACE or word == "-r"):  # npm -ws, pnpm -r: every package.json
            found.append(("-w", "**"))
            continue
        if not make:
            _check_npm_option(word)
            if manager == "npm" and (read := _npm_read(words, index, word)):  # as nopt: `--loglevel x`, `-sC x`
                found.append(read[0])
                index = read[1]
                continue
        if low.startswith("--"):  # an unambiguous abbreviation, as getopt_long reads it: `--direc=x`
            longer = [name for name in LONG_OPTIONS if name.startswith(low)]
            low = low if low in LONG_OPTIONS or len(longer) != 1 else longer[0]
        else:  # short flags joined (`-sC dir`, `-sCdir`): the first that takes a value takes the rest or next word
            at = next((n for n, flag in enumerate(word[1:], 1) if flag in (MAKE_VALUED if make else "CwF")), None)
            if at is not None:
                flag, value = word[at], word[at + 1:]
                if flag in "jlO":  # make's optional values: only the rest of the word
                    continue
                if flag in "IoW":  # a value, not a file make reads first
                    index += not value and index < len(words)
                    continue
                low = {"C": "-c", "f": "-f", "w": "-w", "F": "-w"}[flag]  # pnpm's -F: --filter, a workspace
                value = value if make else value.removeprefix("=")  # npm's `-w=impl` (nopt), not make's
        if not value and low in VALUED and index < len(words):
            value = words[index]
            index += 1
        found.append((low, value))
    if not make and not command and manager == "yarn" and not {key for key, _ in found} & _YARN_ONLY_SAYS:
        found += [("-w", "**"), (INSTALL, "")]  # a bare `yarn` (`yarn --frozen-lockfile`) installs
    return found


_YARN_ONLY_SAYS = frozenset(("--version", "-v", "--help", "-h"))  # a bare yarn with one of these installs nothing


def _npm_read(words: list[str], index: int, word: str) -> tuple[tuple[str, str], int] | None:
    """npm's option ``word`` (``words[index]`` the word after it) as nopt reads it, as :func:`runner_options` gives it
    (``("--prefix", dir)``, ``("-w", name)``, ``("--loglevel", "error")``), and where the next word is read from;
    None for an option nopt does not know (``-wimpl``: read as ``-w impl``, the safe side)."""
    name = _npm_option(word)
    if not (name in _NPM_VALUED or name in _NPM_FLAGS or name.startswith("-")):
        return None
    key, equals, value = word.partition("=")
    following = words[index] if index < len(words) else None
    if not equals and _npm_value_next(word, following):
        value, index = following or "", index + 1
    return ({"prefix": "--prefix", "workspace": "-w"}.get(name, "--" + name.lstrip("-")), value), index


def _plain_word(words: list[str], index: int, word: str, first: bool, manager: str,
                found: list[tuple[str, str]]) -> int:
    """:func:`runner_options`' reading of the plain ``word`` (``first``: the command), added to ``found``; where the
    next word is read from."""
    if word == "workspace" and first and index < len(words):  # `yarn workspace x lint`
        found.append(("-w", words[index]))
        return index + 1
    if word == "workspaces" and first:  # `yarn workspaces foreach`: every workspace
        found.append(("-w", "**"))
    elif first and _installs(manager, word.lower(), words[index:]):  # every workspace's install scripts run
        found += [("", word), ("-w", "**"), (INSTALL, "")]
    else:
        found.append(("", word))
    return index


def _installs(manager: str, command: str, rest: list[str]) -> bool:
    """Whether ``manager``'s (npm, pnpm, yarn, bun) ``command``, followed by ``rest``, reifies a tree: runs the
    lifecycle scripts of every workspace package and local dependency it installs, rebuilds or links. npm: every
    command but those known to reify nothing (``npm audit`` but ``npm audit fix``)."""
    if manager != "npm":
        return command in INSTALLS
    rest = rest[:next((n for n, word in enumerate(rest) if set(word) <= SEPARATOR), len(rest))]
    if command == "audit":
        return "fix" in rest
    if command in ("pack", "publish"):  # the project's own prepack/prepare scripts; a folder's given as a spec
        return any(folder_spec(word) is not None for word in rest)
    return command not in _NPM_READS
