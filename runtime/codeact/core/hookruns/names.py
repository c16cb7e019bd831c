"""The programs, options and words the command reader knows, as data: which names run code, read a project file,
change folder or write files."""
from __future__ import annotations

import re

SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".fish", ".ps1", ".psm1", ".psd1", ".py", ".pyw", ".pyz", ".js",
                   ".mjs", ".cjs", ".ts", ".mts", ".cts", ".rb", ".pl", ".php", ".lua", ".bat", ".cmd", ".jar",
                   ".exe")
# Words after which the next plain word is a script the command runs, whether that file exists or not.
INTERPRETERS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "python", "python3", "py",
                          "pythonw", "node", "deno", "bun", "tsx", "ts-node", "ruby", "perl", "php", "lua", "pwsh",
                          "powershell", "pwsh.exe", "powershell.exe", "-file", "cmd", "cmd.exe", "call"))
SHELL_NAMES = ("sh", "bash", "zsh", "dash", "ksh", "fish", "mksh", "ash", "busybox")  # POSIX shells: `-c` text
CHANGE_DIR = frozenset(("cd", "pushd", "chdir", "set-location", "sl", "push-location"))
OUTPUT_REDIRECTS = frozenset((">", ">>", ">|", "&>", "&>>"))
PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "COPILOT_PROJECT_DIR")
PLUGIN_VARS = ("CLAUDE_PLUGIN_ROOT", "COPILOT_PLUGIN_ROOT", "PLUGIN_ROOT")  # the CLI sets all three
# Runners that read a file of the folder they run in first (`python -m a.b`: a/b.py; `make`: the Makefile; `npm run
# x`: package.json): that file is protected like a script the hook names. What it imports or runs in turn is not.
PYTHON = re.compile(r"(?:python[0-9.]*w?|py)(?:\.exe)?")
MAKES = frozenset(("make", "gmake", "make.exe", "gmake.exe", "mingw32-make", "mingw32-make.exe"))
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # those make reads, the first found
NPMS = frozenset(("npm", "npm.cmd", "npm.exe"))
# go's commands that compile and run the repository's Go code (`go run ./cmd/x`, `go test`, `go generate`'s
# `//go:generate` lines): the *.go files of the packages named (`./...`: every one below) are their first files,
# with the module's files of the folder run in and each folder up (go.mod's `replace` and `toolchain` lines); what a
# package imports from elsewhere in the module is the repository's own code, not covered
GO_RUNS = frozenset(("run", "test", "generate"))
GO_MODULE_FILES = ("go.mod", "go.sum", "go.work", "go.work.sum")
# Formatters, linters and hook runners whose configuration is code they load first (eslint.config.js, a
# .prettierrc.js, lint-staged.config.js: Node.js modules; .pre-commit-config.yaml: the `entry` commands of its local
# hooks), looked for in the folder they run in and each folder up: protected as a runner's first files
TOOL_CONFIGS = {"eslint": ("eslint.config.*", ".eslintrc", ".eslintrc.*", "package.json"),
                "prettier": (".prettierrc", ".prettierrc.*", "prettier.config.*", "package.json"),
                "lint-staged": (".lintstagedrc", ".lintstagedrc.*", "lint-staged.config.*", "package.json"),
                "pre-commit": (".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml")}
TOOL_CONFIGS["prek"] = TOOL_CONFIGS["pre-commit"]  # pre-commit's drop-in
_NPM_SCRIPTS = frozenset(("run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart", "install",
                          "i", "ci", "install-test", "it", "install-ci-test", "cit"))  # read package.json's scripts
PACKAGE_RUNNERS = frozenset(("pnpm", "yarn", "bun", "pnpm.cmd", "yarn.cmd", "bun.exe"))  # `yarn lint`: a script
RUNNER_DIRS = frozenset(("-c", "--directory", "--prefix", "--dir", "--cwd"))  # an option naming the folder run in
MAKE_FILES = frozenset(("-f", "--file", "--makefile"))
SEPARATOR = frozenset(";&|()")
WORKSPACES = frozenset(("-w", "--workspace", "--filter"))  # npm's workspace, pnpm's filter: its package.json
# npm's --workspaces (-ws), pnpm's --recursive (-r): every workspace's package.json (`*/package.json`)
EVERY_WORKSPACE = frozenset(("--workspaces", "-ws", "--ws", "--recursive"))
# npm's (pnpm's, yarn's, bun's) commands that install: the lifecycle scripts of every workspace package and every
# local `file:` dependency run, so every package.json below is read as theirs
INSTALLS = frozenset(("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "isntall", "add",
                       "ci", "clean-install", "ic", "install-clean", "isntall-clean", "install-test", "it",
                       "install-ci-test", "cit", "update", "up", "upgrade", "udpate", "rebuild", "rb", "link", "ln",
                       "remove", "rm", "r", "un", "uninstall", "unlink", "prune", "dedupe", "ddp", "import",
                       "approve-builds", "patch-commit", "upgrade-interactive", "unplug", "trust"))
# Beside each package.json an install reads: what it installs from (lockfiles, a tarball a `file:` spec or a lockfile
# names) and node-gyp's files (npm's default install script for a package with binding.gyp: `node-gyp rebuild`, and
# gyp runs a `<!(cmd)` of the file while reading it; config.gypi and common.gypi of the folder are included)
INSTALL_FILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb",
                  "binding.gyp", "config.gypi", "common.gypi", "*.tgz", "*.tar", "*.tar.gz")
# What a package manager loads at every command, wherever in the repository (pnpm: the workspace's root; yarn: every
# folder up): pnpm's .pnpmfile.cjs hooks and pnpm-workspace.yaml settings, yarn's .yarnrc `yarn-path` and
# .yarnrc.yml `yarnPath` (the JavaScript yarn hands the command to), its plugins and PnP loaders, bun's bunfig.toml
MANAGER_FILES = {"pnpm": (".pnpmfile.cjs", ".pnpmfile.mjs", "pnpm-workspace.yaml"),
                  "yarn": (".yarnrc", ".yarnrc.yml", ".yarn/releases/**", ".yarn/plugins/**", ".pnp.cjs", ".pnp.js",
                           ".pnp.loader.mjs"),
                  "bun": ("bunfig.toml",)}
INSTALL = "\x00install"  # :func:`runner_options`' mark of an install
MAKE_VALUED = "CfIoWjlO"  # make's short flags that take a value (j, l, O: only joined)
VALUED = frozenset((*RUNNER_DIRS, *MAKE_FILES, *WORKSPACES))  # a make or npm option that takes the next word
LONG_OPTIONS = tuple(name for name in VALUED if name.startswith("--"))


# Text filters whose own program may run a command (:mod:`.filters` reads it)
AWKS = frozenset(("awk", "gawk", "mawk", "nawk"))
FILTERS = AWKS | {"sed", "gsed"}


# Commands that run what they read on stdin, besides shells and interpreters (RUNS_CODE): ed's and vim's `!cmd`,
# sqlite3's `.shell` (not with `-safe`), gdb's `shell`, m4's `syscmd`, dc's `!`; a pipe or here-document into one
# is not read. make with `-f -` (or `/dev/stdin`) runs the Makefile it reads there.
STDIN_RUNNERS = frozenset(("ed", "ex", "vi", "vim", "nvim", "view", "rvim", "gvim", "gdb", "lldb", "m4", "dc",
                            "sqlite3", "mysql", "psql", "csh", "tcsh", "yash", "expect", "jshell", "ghci"))
# An interpreter's options that take the next word as their value (a shell's, python's, node's): a word after
# them that is no option is the script it runs; an option not known here leaves that unknown
SCRIPT_VALUED = {"shell": ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"), "python": ("-W", "-X"),
                  "node": ("-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                           "--env-file", "--title", "--disable-warning")}
NODE_FLAGS = frozenset(("--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught",
                         "--trace-deprecation", "--throw-deprecation", "--no-deprecation", "--pending-deprecation",
                         "--preserve-symlinks", "--preserve-symlinks-main", "--experimental-vm-modules",
                         "--experimental-strip-types", "--no-experimental-fetch", "--abort-on-uncaught-exception"))
# `python -c CODE` given a pipe reads it as data where CODE imports only these modules (none runs, imports, opens
# or writes what it is given) and names none of PYTHON_CODE_RUNS (exec, eval, compile, getattr, open, a name or an
# attribute with a leading underscore: `__import__`, `sys._getframe`, a frame's globals): `json.load(sys.stdin)`
PYTHON_DATA_MODULES = frozenset(("json", "sys", "re", "shlex", "string", "textwrap", "datetime", "time", "math",
                                  "collections", "itertools", "fnmatch", "base64", "binascii", "hashlib", "uuid",
                                  "pprint", "enum", "html", "urllib", "urllib.parse",
                                  "decimal", "fractions", "statistics", "random", "unicodedata", "difflib", "csv",
                                  "tomllib", "calendar", "zlib", "ipaddress", "bisect", "heapq", "copy", "stat"))
PYTHON_CODE_RUNS = re.compile(
    r"\b(?:exec|eval|compile|getattr|setattr|delattr|globals|locals|vars|open|breakpoint|help|modules|"
    r"f_\w+|gi_\w+|tb_\w+|cr_\w+|ag_\w+|co_\w+|load_module|import_module|interact)\b|(?<![\w])_|\._|\\")
PWSH = frozenset(("pwsh", "pwsh.exe", "powershell", "powershell.exe"))


RUNS_CODE = frozenset((*SHELL_NAMES, "pwsh", "pwsh.exe", "powershell", "powershell.exe", "cmd", "cmd.exe", "node",
                        "nodejs", "deno", "bun", "tsx", "ts-node", "perl", "ruby", "irb", "php", "lua", "tclsh",
                        "rscript"))  # with python*: a command that runs the code it reads (awk: its argument)
# Words that leave the next one at a command's place: keywords, and commands that run the command after them
# (their options, durations and the values of the short options named here: `nice -n 5 sh`, `timeout -s KILL 5 sh`)
KEYWORDS = frozenset(("do", "then", "else", "elif", "if", "while", "until", "!", "{", "coproc"))
WRAPPERS = {"env": "uC", "nice": "n", "nohup": "", "timeout": "sk", "stdbuf": "ioe", "command": "", "exec": "a",
             "builtin": "", "eval": "", "sudo": "ugCDhprtU", "doas": "uC", "setsid": "", "ionice": "cnp", "chrt": "",
             "caffeinate": "", "unbuffer": "", "time": "fo"}
SETS_NAMES = frozenset(("read", "mapfile", "readarray", "for", "select", "getopts"))  # `read -r f`: f
SPECIAL = re.compile(r"\$\{?(?:[0-9@*#?!$_-]|#)")  # `$1`, `$@`, `${1}`, `$_`: what the command was given or ran


# Variables that make a shell or runner read (or run) a file before, or instead of, what the command names: set
# by a hook entry's ``env`` or a command's ``VAR=`` word, they make the hooks file Unread (which file is not
# followed). PATH, HOME and the loaders' too: the repository's folder in them makes `python3` or a profile its file.
UNFOLLOWED_VARIABLES = re.compile(
    r"(?i:BASH_ENV|ENV|ZDOTDIR|HOME|PATH|CDPATH|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|"
    r"LD_\w+|DYLD_\w+|NODE_OPTIONS|NODE_PATH|NODE_EXTRA_CA_CERTS|npm_config_(?!prefix$)\w+|"
    r"PYTHONSTARTUP|PYTHONHOME|PYTHONUSERBASE|PYTHONEXECUTABLE|PYTHONPLATLIBDIR|PIP_\w+|UV_\w+|VIRTUAL_ENV|"
    r"PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|GEM_\w+|BUNDLE_\w+|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|"
    r"CLASSPATH|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|GIT_\w+|BASH_FUNC_\S+|PYTHONWARNINGS|PYTHONPATH_\w+|OLDPWD|"
    r"XDG_CONFIG_HOME|XDG_DATA_HOME|PSModulePath|COREPACK_\w+|YARN_\w+|BUN_\w+|DENO_\w+)")


# Commands that run what they find or decode, which the words do not name: a hooks file using them is Unread.
_ENCODED = {"-e", "-ec", "-en", "-enc", "-enco", "-encod", "-encode", "-encoded", "-encodedc", "-encodedco",
            "-encodedcom", "-encodedcomm", "-encodedcomma", "-encodedcomman", "-encodedcommand"}
_FIND_RUNS = {"-exec", "-execdir", "-ok", "-okdir"}
_FD_RUNS = {"-x", "--exec", "-X", "--exec-batch"}
INDIRECT: dict[str, set[str] | None] = {  # a command, and the options that make it so (None: any use)
    "find": _FIND_RUNS, "gfind": _FIND_RUNS, "busybox": _FIND_RUNS, "fd": _FD_RUNS, "fdfind": _FD_RUNS,
    "xargs": None, "parallel": None, "foreach-object": None, "%": None, "foreach": None, "run-parts": None,
    **{shell: _ENCODED for shell in ("pwsh", "pwsh.exe", "powershell", "powershell.exe")}}
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "pwsh", "powershell", "python", "python3", "node",
                     "perl", "ruby", "source", "."})


# PowerShell's environment variables: `$env:X`, `${env:X}`, `Env:X` (`Set-Item -Path Env:X`), and .NET's setter
ENV_NAME = re.compile(r"(?i)^(?:\$\{?)?env:[\\/]?(\w+)|SetEnvironmentVariable\(\s*['\"]?(\w+)")
SETTERS = frozenset({"export", "declare", "typeset", "readonly", "local", "read", "-v", "-x", "-gx"})


NODE_RUNNERS = frozenset(("node", "node.exe", "nodejs", "tsx", "ts-node", "ts-node-esm", "deno", "bun", "bun.exe"))
NODE_SUFFIXES = (".js", ".cjs", ".mjs", ".json", ".node", ".ts", ".mts", ".cts", ".tsx", ".jsx", ".wasm")


NPXS = frozenset(("npx", "npx.cmd", "pnpx", "bunx", "bunx.exe"))
GIT_VALUED = frozenset(("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"))
CONFIG_READS = frozenset(("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                           "--get-colorbool", "--edit", "-e", "--unset", "--unset-all", "--remove-section",
                           "--rename-section", "get", "list", "edit", "unset", "remove-section", "rename-section"))
CONFIG_VALUED = frozenset(("--file", "-f", "--blob", "--type", "--default", "--comment", "--value"))


# What may read a pipe, a here-document or a here-string as data (an allowlist: any other command given one, a
# wrapper, an interpreter with no script file or a name not known here, makes the hooks file Unread, since a
# command that runs what it reads there may have any name: `flock l sh`, `rbash`, `pypy3`, `busybox ash`).
# Filters and viewers that read their input as text and run nothing it says, and builtins and commands that do
# not read their input at all. awk and sed (their program read by :mod:`.filters`), xargs (its command read by
# the runners), a shell, python or node given a script file, a script of the repository named by its path
# (`./scripts/check.sh`, protected), make and `npm run x` (their files protected) are read apart.
STDIN_DATA = frozenset((
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "jq", "gojq", "jaq", "yq", "sort", "gsort", "uniq", "head", "tail",
    "wc", "cut", "tr", "tee", "cat", "tac", "rev", "nl", "fold", "fmt", "column", "paste", "join", "comm", "expand",
    "unexpand", "pr", "tsort", "numfmt", "base64", "base32", "basenc", "od", "hexdump", "xxd", "strings", "iconv",
    "diff", "cmp", "md5sum", "md5", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum",
    "shasum", "cksum", "sum", "gzip", "gunzip", "zcat", "bzip2", "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd",
    "unzstd", "zstdcat", "lz4", "dos2unix", "unix2dos", "shuf", "sponge", "logger", "read", "mapfile", "readarray",
    "true", "false", ":", "echo", "printf", "test", "[", "[[", "exit", "return", "sleep", "wait", "cd", "pwd",
    "mkdir", "touch", "rm", "rmdir", "chmod", "ls", "stat", "date", "basename", "dirname", "realpath", "readlink",
    "export", "local", "declare", "typeset", "set", "shift", "break", "continue", "unset", "tput"))
# Shell words that open and close a compound command: given a pipe, each command inside reads it
COMPOUND_OPEN = frozenset(("{", "if", "while", "until", "for", "select", "case"))
COMPOUND_CLOSE = frozenset(("}", "fi", "done", "esac"))
# Commands whose words name no file they write (or only change a file's mode or time): a script a hook runs that
# such a word names is not one the hook writes (`test -f scripts/x.sh && bash scripts/x.sh`)
# (audited for the ways each writes a file: xxd's outfile, `yq -i`, `zstdcat -o` write; jq, od, hexdump, cut, tr,
# column, paste, fmt, tac, nl, head, tail, cmp, diff (no output file in GNU's), the sums' `-c` (reads) do not)
READ_ONLY = STDIN_DATA - {"tee", "sponge", "sort", "gsort", "uniq", "shuf", "iconv", "gzip", "gunzip", "bzip2",
                            "bunzip2", "xz", "unxz", "zstd", "unzstd", "zstdcat", "lz4", "dos2unix", "unix2dos",
                            "base64", "base32", "basenc", "xxd", "yq"} | {"shellcheck", "command", "type", "which", "hash", "file",
                                                              "source", ".", "pushd", "popd", "chown", "chgrp"}
# Commands that copy (move, link) their source operands to the last or `-t` one: a script a hook runs at or below
# their destination is theirs, read from those sources (protected, with every file below them)
COPIERS = frozenset(("cp", "gcp", "mv", "gmv", "ln", "gln", "install", "ginstall", "rsync", "ditto", "scp"))
# What xargs may run with its input as extra arguments, read as data whatever they are (an allowlist: `xargs
# rbash`, `xargs flock l bash`, `xargs make -f`, `xargs awk -f` run them): tools that read the files named, or
# change their mode or remove them, and run nothing they say; sort and the rest of STDIN_DATA as a pipe's reader.
# awk and sed given a program, npx running a formatter of FORMATTERS, git add and a script of the repository
# named by its path are read apart (:func:`.runners._xargs_reads_data`).
XARGS_DATA = (STDIN_DATA - {"read", "mapfile", "readarray", "exit", "return", "wait", "cd", "export", "local",
                              "declare", "typeset", "set", "shift", "break", "continue", "unset", "[[", "tee",
                              "sponge", "logger"}) | {
    "file", "du", "chown", "chgrp", "shellcheck", "black", "isort", "ruff", "autopep8", "yapf", "clang-format",
    "gofmt", "goimports", "rustfmt", "shfmt", "prettier", "eslint", "biome", "stylelint", "markdownlint",
    "markdownlint-cli2", "oxlint", "dprint", "taplo", "yamllint", "codespell", "typos", "editorconfig-checker"}
# Formatters and linters npx (pnpm exec, yarn, bunx) may run with xargs' input: they read the files named
FORMATTERS = frozenset(("prettier", "eslint", "biome", "stylelint", "markdownlint", "markdownlint-cli",
                         "markdownlint-cli2", "oxlint", "dprint", "taplo", "standard"))
