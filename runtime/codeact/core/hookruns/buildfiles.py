"""The files a build tool a hook runs reads first, before any of the project's code: a Python installer's build
script and backend (``pip install .`` runs ``setup.py`` or the in-tree backend ``pyproject.toml`` names), cargo's
``build.rs`` and ``.cargo/config.toml``, Maven's ``pom.xml`` and ``.mvn/`` (:mod:`codeact.core.hookruns` reads the
commands; this module says which files each of these runners takes, relative to the folder it runs in).

What those files' code runs in turn (a backend's imports, a proc-macro crate, a Maven plugin's sources) is the
project's own code, as a test suite is: not read.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable

PIPS = re.compile(r"pip[0-9.]*(?:\.exe)?")
_PIP_BUILDS = frozenset(("install", "wheel", "download"))  # a local folder or sdist operand is built
# pip's options that take the next word (those of `install`, `wheel`, `download` and the general ones)
_PIP_VALUED = frozenset(("-t", "--target", "--prefix", "--root", "--src", "-i", "--index-url", "--extra-index-url",
                         "-f", "--find-links", "--platform", "--python-version", "--implementation", "--abi",
                         "--upgrade-strategy", "--progress-bar", "--log", "--log-file", "--cache-dir", "--proxy",
                         "--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert",
                         "-C", "--config-settings", "--global-option", "--build-option", "--python", "--report",
                         "-d", "--dest", "-w", "--wheel-dir", "--no-binary", "--only-binary", "--keyring-provider",
                         "--root-user-action", "--use-feature", "--use-deprecated", "--index-strategy",
                         "--extra-index", "--resolution", "-p"))
_REQUIREMENTS = frozenset(("-r", "--requirement", "-c", "--constraint", "--constraints", "--requirements"))
_EDITABLE = frozenset(("-e", "--editable"))
_SDISTS = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
# uv's project commands (they build the project at the folder, or read its metadata through its backend)
_UV_PROJECT = frozenset(("run", "sync", "lock", "build", "add", "remove", "export", "tree", "version"))
_PROJECT_TOOLS = {"pdm": frozenset(("install", "sync", "build", "lock", "add", "update")),
                  "poetry": frozenset(("install", "build"))}
PYTHON_PROJECT = ("setup.py", "setup.cfg", "pyproject.toml")
_CARGOS = frozenset(("cargo", "cargo.exe"))
_CARGO_UP = (".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain")  # every folder up
_MAVENS = frozenset(("mvn", "mvnw", "mvn.cmd", "mvnw.cmd", "mvn.bat"))
RUNNERS = frozenset(("uv", "uv.exe", "pdm", "pdm.exe", "poetry", "poetry.exe", *_CARGOS, *_MAVENS))
_UP = 32  # parent folders a cargo or Maven command's files are looked for in (those outside the repository drop)
SEPARATOR = frozenset(";&|()")

Expand = Callable[[str], "str | None"]  # a word as a path from the folder the command runs in; None: not known
Read = Callable[[str], "list[bytes]"]  # a file of the repository's (relative to each folder it may run in)


def build_files(name: str, words: list[str], start: int, expand: Expand, read: Read) -> list[str]:
    """The files the runner ``name`` (a command's file name, lower case) with the words ``words[start:]`` reads
    first, relative to the folder it runs in: for pip, ``python -m pip``, ``uv pip``, ``uv run``/``sync``...,
    ``pdm``, ``poetry`` and ``python -m build`` what :func:`python_project` names of each local folder built; for
    cargo :func:`cargo_files`; for ``mvn``/``mvnw`` :func:`maven_files`."""
    if PIPS.fullmatch(name):
        return _pip_files(words, start, expand, read)
    if name in ("uv", "uv.exe"):
        sub, at = _word_after_options(words, start, frozenset(("--directory", "--project", "--python", "-p")))
        if sub == "pip":
            return _pip_files(words, at + 1, expand, read)
        if sub in _UV_PROJECT:
            folder = _option_value(words, start, ("--directory", "--project")) or "."
            return python_project(folder, read)
        return []
    if name in _PROJECT_TOOLS or name.removesuffix(".exe") in _PROJECT_TOOLS:
        sub, _ = _word_after_options(words, start, frozenset(("-C", "--directory", "-p", "--project")))
        if sub in _PROJECT_TOOLS[name.removesuffix(".exe")]:
            return python_project(_option_value(words, start, ("-C", "--directory", "-p", "--project")) or ".", read)
        return []
    if name in _CARGOS:
        return cargo_files(words, start, expand, read)
    if name in _MAVENS:
        return maven_files(words, start, expand, read)
    return []


def python_module_files(module: str, words: list[str], at: int, expand: Expand, read: Read) -> list[str]:
    """For ``python -m pip`` and ``python -m build`` (``module``; the words after it from ``words[at]``): as
    :func:`build_files` reads ``pip``; ``build``'s folder operand (``.`` when none)."""
    if module == "pip":
        return _pip_files(words, at, expand, read)
    if module == "build":
        operand = next((word for word in words[at:at + 32] if not word.startswith("-")
                        and not set(word) <= SEPARATOR), ".")
        return python_project(operand, read)
    return []


def _word_after_options(words: list[str], start: int, valued: frozenset[str]) -> tuple[str, int]:
    """The first word of ``words[start:]`` that is no option (those of ``valued`` skip their value), lower case,
    and its index; ``("", -1)`` at the command's end."""
    index = start
    while index < len(words) and index < start + 32:
        word = words[index]
        if word and set(word) <= SEPARATOR:
            break
        if not word.startswith("-"):
            return word.lower(), index
        index += 1 + (word in valued)
    return "", -1


def _option_value(words: list[str], start: int, names: tuple[str, ...]) -> str | None:
    """The value of the first of the options ``names`` among ``words[start:]`` (``--x v``, ``--x=v``)."""
    for index in range(start, min(len(words), start + 32)):
        word = words[index]
        if word and set(word) <= SEPARATOR:
            break
        key, equals, value = word.partition("=")
        if key in names:
            return value if equals else (words[index + 1] if index + 1 < len(words) else None)
    return None


def _pip_files(words: list[str], start: int, expand: Expand, read: Read, depth: int = 0) -> list[str]:
    """The files ``pip <command> ...`` (``words[start:]``) builds from: each local folder operand's
    :func:`python_project` (``.``, ``-e .``, ``./x``, ``file:x``, a bare word that would be a folder), an sdist
    operand itself, and the requirements and constraints files (``-r x``), with the operands their lines name."""
    sub, at = _word_after_options(words, start, _PIP_VALUED | _REQUIREMENTS)
    if sub not in _PIP_BUILDS and sub != "sync":  # `uv pip sync req.txt`: its operands are requirements files
        return []
    found: list[str] = []
    index = at + 1
    while index < len(words) and len(found) < 256:
        word = words[index]
        index += 1
        if word and set(word) <= SEPARATOR:
            break
        key, equals, joined = word.partition("=")
        value = joined if equals and key.startswith("--") else None
        if value is None and key in _EDITABLE | _REQUIREMENTS | _PIP_VALUED and index < len(words):
            value = words[index]
            index += 1
        elif value is None and len(word) > 2 and word[1] in "erc" and word[0] == "-" and word[1:2] != "-":
            key, value = word[:2], word[2:]  # `-e.`, `-rreq.txt`
        if key in _REQUIREMENTS or (sub == "sync" and not word.startswith("-")):
            found += _requirements(value if value is not None else word, expand, read, depth)
        elif key in _EDITABLE and value is not None:
            found += _operand(value, read)
        elif not word.startswith("-"):
            found += _operand(word, read)
    return found


def _requirements(file: str, expand: Expand, read: Read, depth: int) -> list[str]:
    """A requirements file pip reads (protected itself), and what its lines name (``-e .``, ``./x``, ``-r x``,
    two levels deep), relative to the folder pip runs in as pip reads local paths."""
    found = [file]
    for data in read(file) if depth < 2 and expand(file) is not None else []:
        for line in data.decode("utf-8", "replace").splitlines()[:1000]:
            words = line.split(" #", 1)[0].split()
            if words and not words[0].startswith("#"):
                nested = re.fullmatch(r"(-r|--requirements?|-c|--constraints?)(?:=|(?=.))(.+)", words[0])
                words = [nested[1], nested[2], *words[1:]] if nested else words
                if words[0] in _REQUIREMENTS and len(words) > 1:  # pip reads a nested file from this one's folder
                    words[1] = os.path.join(os.path.dirname(file), words[1])
                found += _pip_files(["install", *words], 0, expand, read, depth + 1)
    return found


def _operand(word: str, read: Read) -> list[str]:
    """What pip builds of the operand ``word``: a local folder's :func:`python_project`, an sdist archive, nothing
    for a requirement (``x==1``, ``x>=1``, ``requests``: pip 23 reads a word holding no ``/`` and not starting
    with ``.`` as a name, even where such a folder exists), a URL or a wheel."""
    spec = re.sub(r"\[[^\]]*\]$", "", word.strip())  # `.[dev]`: the folder, its extras aside
    if spec.lower().startswith("file:"):
        spec = re.sub(r"^file:(?://localhost|//)?", "", spec, flags=re.IGNORECASE)
    elif not (spec.startswith(".") or "/" in spec or "\\" in spec or spec.lower().endswith(_SDISTS)):
        return []
    if not spec or "://" in spec or any(char in spec for char in "=<>~!;@$ ") or spec.lower().endswith(".whl"):
        return []
    if spec.lower().endswith(_SDISTS):
        return [spec]
    return python_project(spec, read)


def python_project(folder: str, read: Read) -> list[str]:
    """What a build of the Python project in ``folder`` runs first: ``setup.py``, ``setup.cfg``,
    ``pyproject.toml``, and the in-tree backend ``pyproject.toml``'s ``backend-path`` holds (the module
    ``build-backend`` names, in each of those folders)."""
    found = [os.path.join(folder, name) for name in PYTHON_PROJECT]
    for data in read(os.path.join(folder, "pyproject.toml")):
        found += _backend_files(folder, data.decode("utf-8", "replace"))
    return found


def _backend_files(folder: str, text: str) -> list[str]:
    """The in-tree backend of the ``pyproject.toml`` text ``text`` (its ``backend-path``), in ``folder``."""
    found: list[str] = []
    paths = re.search(r"(?m)^\s*backend-path\s*=\s*\[([^\]]*)\]", text)
    backend = re.search(r"(?m)^\s*build-backend\s*=\s*[\"']([^\"']+)[\"']", text)
    if paths is None:
        return found
    module = backend[1].split(":")[0].strip() if backend else ""
    parts = module.split(".") if module else []
    for where in re.findall(r"[\"']([^\"']*)[\"']", paths[1])[:16]:
        base = os.path.join(folder, where)
        if not parts or not all(part.isidentifier() for part in parts):
            found.append(os.path.join(base, "**"))  # no module known: every file of the folder
            continue
        path = os.path.join(base, *parts)
        found += [f"{path}.py", os.path.join(path, "__init__.py"), os.path.join(path, "**"),
                  *(os.path.join(base, *parts[:n], "__init__.py") for n in range(1, len(parts)))]
    return found


def cargo_files(words: list[str], start: int, expand: Expand, read: Read) -> list[str]:
    """What ``cargo ...`` reads first: ``.cargo/config.toml`` (and ``.cargo/config``: a ``runner``, a
    ``rustc-wrapper``, an alias) and rustup's ``rust-toolchain.toml`` in the folder it runs in and every folder
    above; but for ``cargo fmt`` (which builds nothing) ``Cargo.toml`` and ``build.rs`` of the package
    (``--manifest-path``), of every package below it (a workspace's members) and of every folder above it (cargo
    takes the nearest ``Cargo.toml`` at or above the folder, and a workspace's root above that), and the build
    script each of those ``Cargo.toml`` files names (``build = "..."``)."""
    manifest = _option_value(words, start, ("--manifest-path",))
    folder = os.path.dirname(manifest) if manifest else "."
    chdir = _option_value(words, start, ("-C",))
    if chdir:
        folder = os.path.join(chdir, folder)
    if expand(folder) is None:
        folder = "."
    found = [os.path.join(folder, *[".."] * up, name) for up in range(_UP) for name in _CARGO_UP]
    if _cargo_command(words, start) == "fmt":  # rustfmt reads no build script
        return found
    found += [os.path.join(folder, where, name) for where in ("", "**") for name in ("Cargo.toml", "build.rs")]
    if manifest:
        found.append(manifest)
    for up in range(_UP):
        above = os.path.join(folder, *[".."] * up)
        if up:
            found += [os.path.join(above, "Cargo.toml"), os.path.join(above, "build.rs")]
        for data in read(manifest if manifest and not up else os.path.join(above, "Cargo.toml")):
            found += [os.path.join(above, named) for named in re.findall(
                r"(?m)^\s*build\s*=\s*[\"']([^\"']+)[\"']", data.decode("utf-8", "replace"))[:16]]
    return found


def _cargo_command(words: list[str], start: int) -> str:
    """The subcommand of ``cargo`` whose words start at ``words[start]`` (``cargo +nightly -q fmt``: ``fmt``)."""
    index = start
    while index < len(words) and index < start + 32:
        word = words[index]
        if word and set(word) <= SEPARATOR:
            break
        if not word.startswith(("-", "+")):
            return word.lower()
        index += 1 + (word in _CARGO_VALUED)
    return ""


_CARGO_VALUED = frozenset(("-C", "--manifest-path", "--config", "-Z", "--color", "--target-dir", "--lockfile-path",
                           "--explain"))


def maven_files(words: list[str], start: int, expand: Expand, read: Read) -> list[str]:
    """What ``mvn``/``mvnw`` reads first: ``.mvn/`` (``jvm.config``, ``maven.config``, ``extensions.xml``, the
    wrapper's files) of the folder it runs in and every folder above (Maven takes the nearest), ``pom.xml`` there
    (``-f``/``--file``), every module's below and every folder's above (a ``<parent>``'s default
    ``../pom.xml``), and the parent a ``<relativePath>`` of those POMs names (a folder's ``pom.xml``, or the
    file)."""
    given = _option_value(words, start, ("-f", "--file"))
    if given is None:
        given = next((word[2:] for word in words[start:start + 32] if word.startswith("-f") and len(word) > 2
                      and not word.startswith("--")), None)
    folder = "."
    found: list[str] = []
    if given and expand(given) is not None:
        if given.lower().endswith(".xml"):
            found.append(given)
            folder = os.path.dirname(given) or "."
        else:
            folder = given
    found += [os.path.join(folder, where, "pom.xml") for where in ("", "**")]
    found += [os.path.join(folder, *[".."] * up, ".mvn", "**") for up in range(_UP)]
    poms = [found[0] if given and given.lower().endswith(".xml") and expand(given) is not None else ""]
    poms += [os.path.join(folder, *[".."] * up, "pom.xml") for up in range(_UP)]
    found += poms[2:]
    for pom in filter(None, poms):
        for data in read(pom):
            for named in re.findall(r"<relativePath>\s*([^<]+?)\s*</relativePath>",
                                    data.decode("utf-8", "replace"))[:16]:
                where = os.path.join(os.path.dirname(pom), named)
                found += [where] if where.lower().endswith(".xml") else [os.path.join(where, "pom.xml")]
    return found
