"""The benchmark's workspace: a realistic Python monorepo, generated deterministically from a seed.

    write_workspace(root, seed=7, packages=14) -> Layout

Fourteen packages under ``src/acme/`` (about 200 modules with classes, methods, functions, imports and TODO
comments), their tests under ``tests/``, an ``OWNERS`` file per package, JSON configs under ``config/`` (a few of
them invalid, as hand-edited configs are), docs and a README; for issue 18's tasks a ``to_cents`` function with
call sites across packages, and 500 small SQL migrations under ``migrations/``. The same seed gives byte-identical
files on every machine: names come from fixed word lists, and only ``random.Random(seed)`` decides.

Nothing here knows the benchmark's answers: ``bench_codeact_vs_baseline.py`` computes the ground truth from the
files themselves (``ast``, ``tokenize``, ``json``), never from the generator's bookkeeping.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ["billing", "auth", "catalog", "orders", "shipping", "inventory", "search", "notify", "reports", "users",
            "payments", "analytics", "gateway", "scheduler", "audit", "pricing"]
MODULE_WORDS = ["client", "models", "service", "handlers", "utils", "cache", "store", "schema", "views", "tasks",
                "events", "rules", "adapters", "errors", "metrics", "retry", "parser", "export", "importer", "policy",
                "backend", "worker", "queue", "limits", "filters", "routes", "tokens", "session", "sync", "audit_log"]
NOUNS = ["Invoice", "Account", "Order", "Item", "Shipment", "Ledger", "Token", "Session", "Report", "Route", "Rule",
         "Batch", "Record", "Quota", "Profile", "Cursor", "Window", "Bucket", "Channel", "Policy", "Snapshot", "Job"]
SUFFIXES = ["", "Manager", "Store", "Client", "Builder", "Handler", "Cache", "Service", "Error", "View"]
VERBS = ["load", "save", "fetch", "build", "parse", "render", "validate", "apply", "merge", "split", "sync",
         "resolve", "refresh", "compute", "emit", "collect", "publish", "normalize", "reconcile", "expire"]
OBJECTS = ["rows", "items", "batch", "payload", "entry", "record", "window", "totals", "config", "headers",
           "events", "snapshot", "cursor", "quota", "limits", "tokens", "routes", "prices", "state", "queue"]
PEOPLE = ["alice", "bob", "carol", "dmitri", "erin", "farah", "gustavo", "hana", "ivan", "jules", "kwame", "lena",
          "mateo", "noor", "olga", "pierre", "quinn", "rashid", "sofia", "tomasz"]
TODO_TEXT = ["handle the empty case", "retry with backoff instead of failing", "remove once v2 ships",
             "this is O(n^2); index by id", "validate the currency code", "log the dropped records",
             "make the timeout configurable", "cache the parsed result", "support pagination",
             "drop the legacy field after the migration", "check permissions before writing",
             "use a proper lock here", "split this function", "add a metric for misses", "document the return value"]
STDLIB = ["json", "re", "logging", "time", "hashlib", "itertools", "functools", "datetime", "decimal", "uuid",
          "collections", "dataclasses", "typing", "pathlib", "subprocess", "shutil", "threading", "sys"]
ENVS = ["dev", "staging", "prod"]


@dataclass
class Layout:
    """What was written: paths relative to ``root`` (for the record only; answers come from the files)."""

    root: Path
    seed: int
    packages: list[str]
    files: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum((self.root / f).stat().st_size for f in self.files)


def _snake(*words: str) -> str:
    return "_".join(w.lower() for w in words if w)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def todo(self, indent: str) -> str:
        r = self.r
        who = f"({r.choice(PEOPLE)})" if r.random() < 0.6 else ""
        sep = ":" if r.random() < 0.85 else ""
        return f"{indent}# TODO{who}{sep} {r.choice(TODO_TEXT)}"

    def body(self, indent: str, names: list[str]) -> list[str]:
        """A few plausible statements; sometimes a TODO comment, sometimes a local ``import os``."""
        r = self.r
        out: list[str] = []
        if r.random() < 0.07:
            out.append(self.todo(indent))
        if r.random() < 0.015:
            out.append(f"{indent}import os  # local import: only this path needs it")
            out.append(f"{indent}base = os.environ.get(\"ACME_HOME\", \".\")")
        obj = r.choice(OBJECTS)
        arg = names[0] if names else "None"
        kind = r.randrange(4)
        if kind == 0:
            out += [f"{indent}{obj} = []", f"{indent}for entry in {arg} or ():",
                    f"{indent}    if entry is not None:", f"{indent}        {obj}.append(entry)",
                    f"{indent}return {obj}"]
        elif kind == 1:
            out += [f"{indent}if not {arg}:", f"{indent}    raise ValueError(\"{obj} must not be empty\")",
                    f"{indent}result = {{\"{obj}\": {arg}, \"count\": len({arg})}}", f"{indent}return result"]
        elif kind == 2:
            out += [f"{indent}try:", f"{indent}    value = {arg}[0]", f"{indent}except (IndexError, TypeError):",
                    f"{indent}    value = None", f"{indent}return value"]
        else:
            out += [f"{indent}total = 0", f"{indent}for n, entry in enumerate({arg} or ()):",
                    f"{indent}    total += n", f"{indent}return total"]
        return out

    def function(self, indent: str, method: bool) -> list[str]:
        r = self.r
        name = _snake(r.choice(VERBS), r.choice(OBJECTS))
        params = sorted(set(r.sample(OBJECTS, r.randrange(1, 3))))
        sig = ", ".join((["self"] if method else []) + params)
        lines = []
        if r.random() < 0.08:
            lines.append(f"{indent}@staticmethod" if method else f"{indent}@functools.lru_cache(maxsize=128)")
            if method:
                sig = ", ".join(params)
        prefix = "async def" if r.random() < 0.07 else "def"
        lines.append(f"{indent}{prefix} {name}({sig}):")
        lines.append(f"{indent}    \"\"\"{r.choice(VERBS).capitalize()} the {r.choice(OBJECTS)}.\"\"\"")
        lines += self.body(indent + "    ", params)
        if r.random() < 0.1:  # a nested helper
            lines.insert(len(lines) - 1, f"{indent}    def _inner(x):")
            lines.insert(len(lines) - 1, f"{indent}        return x")
        return lines

    def klass(self) -> list[str]:
        r = self.r
        name = r.choice(NOUNS) + r.choice(SUFFIXES)
        base = "(Exception)" if name.endswith("Error") else ""
        lines = [f"class {name}{base}:", f"    \"\"\"A {name} of the service.\"\"\"", ""]
        if r.random() < 0.15:
            lines.insert(1, self.todo("    "))
        for i in range(r.randrange(1, 5)):
            if i:
                lines.append("")
            lines += self.function("    ", method=True)
        return lines

    def module(self, pkg: str, mod: str) -> str:
        r = self.r
        imports = sorted(r.sample(STDLIB, r.randrange(1, 5)))
        if "functools" not in imports:
            imports.append("functools")
        head = [f"\"\"\"{pkg}.{mod}: {r.choice(VERBS)} and {r.choice(VERBS)} {r.choice(OBJECTS)} for the {pkg} "
                f"service.\"\"\"", "from __future__ import annotations", ""]
        os_style = r.random()
        import_lines = [f"import {m}" for m in sorted(imports)]
        if os_style < 0.10:
            import_lines.append("import os")
        elif os_style < 0.14:
            import_lines.append("import os.path")
        elif os_style < 0.17:
            import_lines.append("from os import path as osp")
        elif os_style < 0.19:
            import_lines.append("from os.path import join, exists")
        elif os_style < 0.21:
            import_lines.append("import sys, os")
        import_lines.sort(key=lambda s: s.split()[1])
        head += import_lines
        if r.random() < 0.4:
            other = r.choice([p for p in PACKAGES if p != pkg])
            head.append(f"from acme.{other} import {r.choice(MODULE_WORDS)}")
        head += ["", "LOG = logging.getLogger(__name__)" if "logging" in imports else f"NAME = \"{pkg}.{mod}\"",
                 f"DEFAULT_LIMIT = {r.randrange(10, 500)}", ""]
        if r.random() < 0.2:
            head.insert(len(head) - 1, self.todo(""))
        parts: list[list[str]] = []
        for _ in range(r.randrange(0, 4)):
            parts.append(self.klass())
        for _ in range(r.randrange(1, 7)):
            parts.append(self.function("", method=False))
        r.shuffle(parts)
        lines = head + [""]
        for part in parts:
            lines += part + ["", ""]
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines) + "\n"

    def test_module(self, pkg: str, mod: str) -> str:
        r = self.r
        lines = [f"\"\"\"Tests for acme.{pkg}.{mod}.\"\"\"", "import pytest", "",
                 f"from acme.{pkg} import {mod}", ""]
        if r.random() < 0.08:
            lines.insert(2, "import os")
        for i in range(r.randrange(2, 8)):
            name = _snake("test", r.choice(VERBS), r.choice(OBJECTS), str(i))
            lines += ["", f"def {name}():"]
            if r.random() < 0.06:
                lines.append(self.todo("    "))
            lines += [f"    assert {mod}.DEFAULT_LIMIT > 0" if r.random() < 0.5 else
                      f"    assert {mod} is not None", ""]
        if r.random() < 0.3:
            lines += ["", f"class Test{r.choice(NOUNS)}:", "    def test_roundtrip(self):",
                      f"        assert {mod}", ""]
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines) + "\n"

    def config(self, pkg: str, env: str) -> str:
        r = self.r
        data = {
            "service": pkg, "environment": env, "version": f"{r.randrange(1, 4)}.{r.randrange(0, 20)}.{r.randrange(0, 9)}",
            "owner_team": f"team-{pkg}",
            "http": {"port": 8000 + r.randrange(0, 999), "timeout_s": r.choice([5, 10, 30, 60]),
                     "retries": r.randrange(0, 6), "cors": sorted(r.sample(["https://acme.example", "https://admin.acme.example",
                                                                            "https://partner.example", "http://localhost:3000"], 2))},
            "database": {"url": f"postgresql://{pkg}-{env}.db.internal:5432/{pkg}", "pool": {"min": 1, "max": r.randrange(5, 50)},
                         "statement_timeout_ms": r.choice([1000, 5000, 30000])},
            "features": {_snake(r.choice(VERBS), r.choice(OBJECTS)): r.random() < 0.5 for _ in range(r.randrange(4, 12))},
            "limits": {o: r.randrange(1, 10_000) for o in r.sample(OBJECTS, 6)},
            "alerts": [{"name": _snake(pkg, r.choice(OBJECTS), "high"), "threshold": round(r.uniform(0.5, 0.99), 2),
                        "notify": sorted(r.sample(PEOPLE, 2))} for _ in range(r.randrange(2, 6))],
        }
        return json.dumps(data, indent=2) + "\n"


def _break_json(text: str, how: int) -> str:
    """A config hand-edited into invalid JSON, the ways people do it."""
    lines = text.split("\n")
    if how == 0:  # a trailing comma after the last member of an object
        for i in range(len(lines) - 1, 0, -1):
            if lines[i].strip() == "}" and not lines[i - 1].rstrip().endswith(("{", "[", ",")):
                lines[i - 1] += ","
                break
    elif how == 1:  # a comment
        lines.insert(3, '  // staging uses the shared pool')
    elif how == 2:  # single-quoted string
        for i, line in enumerate(lines):
            if '"environment"' in line:
                lines[i] = line.replace('"environment": "', "'environment': '").rstrip(",").rstrip('"') + "',"
                break
    elif how == 3:  # missing comma between two members
        for i, line in enumerate(lines):
            if '"owner_team"' in line:
                lines[i] = line.rstrip(",")
                break
    else:  # truncated file (the last closing brace lost in a merge)
        while lines and lines[-1].strip() in ("", "}"):
            lines.pop()
        lines.append("")
    return "\n".join(lines)


README = """# acme-platform

The ACME platform monorepo: {n} Python services under `src/acme/`, one package each, deployed together.

## Layout

- `src/acme/<service>/` holds a service's modules; its `OWNERS` file names the primary and the secondary owner.
- `tests/<service>/` holds its tests (pytest).
- `config/<service>.<env>.json` holds its settings for `dev`, `staging` and `prod`.
- `docs/` holds design notes, one per service.

## Services

{services}

## Working here

Run the tests with `pytest -q`. Configs are JSON (no comments, no trailing commas); CI validates them.
Owners review every change to their package. Keep TODO comments short and give them an owner: `# TODO(name): ...`.

## License

Proprietary. Do not distribute.
"""


def write_workspace(root: Path, seed: int = 7, packages: int = 14) -> Layout:
    """Write the workspace under ``root`` (created); the same ``seed`` and ``packages`` give the same bytes."""
    gen = _Gen(seed)
    r = gen.r
    chosen = PACKAGES[:packages]
    layout = Layout(root, seed, chosen)

    def put(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        layout.files.append(rel)

    services = []
    broken = 0
    for pkg in chosen:
        modules = sorted(r.sample(MODULE_WORDS, r.randrange(9, 17)))
        put(f"src/acme/{pkg}/__init__.py", f"\"\"\"The {pkg} service.\"\"\"\n__all__ = {modules[:3]!r}\n")
        for mod in modules:
            put(f"src/acme/{pkg}/{mod}.py", gen.module(pkg, mod))
        for mod in r.sample(modules, max(3, len(modules) // 2)):
            put(f"tests/{pkg}/test_{mod}.py", gen.test_module(pkg, mod))
        owners = r.sample(PEOPLE, 2)
        put(f"src/acme/{pkg}/OWNERS", f"# owners of acme.{pkg}: primary first\n{owners[0]}\n{owners[1]}\n")
        for env in ENVS:
            text = gen.config(pkg, env)
            if r.random() < 0.14:
                text = _break_json(text, broken % 5)
                broken += 1
            put(f"config/{pkg}.{env}.json", text)
        put(f"docs/{pkg}.md", f"# {pkg}\n\nDesign notes for the {pkg} service.\n\n"
                              f"- Owner: {owners[0]} (backup: {owners[1]})\n- Talks to: "
                              f"{', '.join(sorted(r.sample([p for p in chosen if p != pkg], 2)))}\n")
        services.append(f"- **{pkg}** — {r.choice(VERBS)}s and {r.choice(VERBS)}s {r.choice(OBJECTS)}; "
                        f"owner {owners[0]}.")
    put("README.md", README.format(n=len(chosen), services="\n".join(services)))
    put("pyproject.toml", "[project]\nname = \"acme-platform\"\nversion = \"0.1.0\"\nrequires-python = \">=3.10\"\n\n"
                          "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\n")
    put(".gitignore", "__pycache__/\n*.pyc\n.venv/\n")
    put("config/README.md", "One JSON file per service and environment.\n")
    # issue 18's tasks: their own random stream, so the files above stay byte-identical to earlier runs
    extra = random.Random(seed * 1000 + 18)
    for rel, text in money_files(extra, chosen):
        put(rel, text)
    for rel, text in migration_files(extra, chosen):
        put(rel, text)
    layout.files.sort()
    return layout


# ======================================================================= the rename and migration tasks' files
MONEY = """\"\"\"billing.money: amounts in cents.\"\"\"
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def to_cents(amount):
    \"\"\"Convert an amount in currency units to whole cents, rounding half up.\"\"\"
    return int((Decimal(str(amount)) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def to_cents_legacy(amount):
    \"\"\"The v1 API's conversion: truncates instead of rounding.\"\"\"
    return int(amount * 100)
"""


def money_files(r: random.Random, chosen: list[str]) -> list[tuple[str, str]]:
    """``src/acme/billing/money.py`` defining ``to_cents`` (and a decoy ``to_cents_legacy``), a ``charges.py`` in
    several other packages calling it (1 to 3 call sites, every line unique within its file) and its tests."""
    out = [("src/acme/billing/money.py", MONEY)]
    users = sorted(r.sample([p for p in chosen if p != "billing"], min(7, len(chosen) - 1)))
    for pkg in users:
        obj = r.choice(OBJECTS)
        qualified = r.random() < 0.3
        imp = "from acme.billing import money" if qualified else "from acme.billing.money import to_cents"
        fn = "money.to_cents" if qualified else "to_cents"
        lines = [f"\"\"\"{pkg}.charges: what the {pkg} service bills.\"\"\"", "from __future__ import annotations", "",
                 imp, "", f"FEE_CENTS = {fn}({r.randrange(1, 20)}.{r.randrange(10, 99)})", "", "",
                 f"def charge_{obj}(amount, quantity=1):", f"    \"\"\"Charge for {obj}.\"\"\"",
                 f"    return {fn}(amount) * quantity + FEE_CENTS"]
        if r.random() < 0.6:
            lines += ["", "", f"def refund_{obj}(amount):", f"    \"\"\"Refund {obj}, never below zero.\"\"\"",
                      f"    return max(0, {fn}(amount) - FEE_CENTS)"]
        if r.random() < 0.3:
            lines += ["", "", "def legacy_total(amount):", "    \"\"\"The v1 total (not renamed: a different function).\"\"\"",
                      "    from acme.billing.money import to_cents_legacy", "    return to_cents_legacy(amount)"]
        out.append((f"src/acme/{pkg}/charges.py", "\n".join(lines) + "\n"))
    out.append(("tests/billing/test_money.py", "\n".join([
        "\"\"\"Tests for acme.billing.money.\"\"\"", "from acme.billing.money import to_cents, to_cents_legacy", "", "",
        "def test_rounds_half_up():", "    assert to_cents(1.005) == 101", "", "",
        "def test_whole_units():", "    assert to_cents(2) == 200", "", "",
        "def test_legacy_truncates():", "    assert to_cents_legacy(1.009) == 100"]) + "\n"))
    return out


def migration_files(r: random.Random, chosen: list[str], count: int = 500, drops: int = 5,
                    decoys: int = 3) -> list[tuple[str, str]]:
    """``migrations/NNNN_*.sql``: ``count`` small SQL migrations with a header (author, reversible). ``drops`` of
    them drop a column; ``decoys`` others only MENTION ``DROP COLUMN`` in a comment."""
    picks = r.sample(range(count), drops + decoys)
    dropping, mentioning = set(picks[:drops]), set(picks[drops:])
    out = []
    for i in range(count):
        table = r.choice(chosen)
        column = r.choice(OBJECTS)
        verb = "drop" if i in dropping else r.choice(["add", "index", "backfill", "rename", "constrain"])
        author = r.choice(PEOPLE)
        body = {"add": [f"ALTER TABLE {table} ADD COLUMN {column} text;"],
                "index": [f"CREATE INDEX {table}_{column}_idx ON {table} ({column});"],
                "backfill": [f"UPDATE {table} SET {column} = '' WHERE {column} IS NULL;"],
                "rename": [f"ALTER TABLE {table} RENAME COLUMN {column} TO {column}_v2;"],
                "constrain": [f"ALTER TABLE {table} ALTER COLUMN {column} SET NOT NULL;"],
                "drop": [f"UPDATE {table} SET {r.choice(OBJECTS)}_archived = true;",
                         f"ALTER TABLE {table} DROP COLUMN {column};"]}[verb]
        if i in mentioning:
            body.insert(0, f"-- do not DROP COLUMN {column} here: the {table} readers still select it")
        reversible = "no" if verb == "drop" and r.random() < 0.6 else "yes"
        lines = [f"-- migration {i + 1:04d}: {verb} {column} on {table}", f"-- author: {author}",
                 f"-- reversible: {reversible}", "BEGIN;", *body, "COMMIT;"]
        out.append((f"migrations/{i + 1:04d}_{verb}_{table}_{column}.sql", "\n".join(lines) + "\n"))
    return out
