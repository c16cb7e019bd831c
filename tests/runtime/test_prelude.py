"""The sandbox prelude (codeact.core.prelude): each helper's pydantic-monty gap is still there (so each test here
FAILS once upstream closes it: delete the helper, its rewrite and its entry in GAPS then), and every helper runs in
the bare sandbox."""
from __future__ import annotations

from typing import Any

import pytest

pm = pytest.importorskip("pydantic_monty")

from codeact.core import prelude  # noqa: E402


def bare(code: str) -> Any:
    """``code`` in pydantic-monty as it is, no rewrite, no prelude: its value, or the exception's text."""
    with pm.Monty(max_processes=1) as pool, pool.checkout(limits={"max_feed_duration_secs": 10.0}) as session:
        try:
            return session.feed_run(code)
        except pm.MontyError as exc:
            return f"error: {exc}"


# helper -> (a program that shows the gap, what the bare sandbox answers, what CPython answers)
GAP_PROGRAMS: dict[str, tuple[str, Any, Any]] = {
    "codeact_re_pattern": ('import re\n(bool(re.search(r"b$", "ab\\n")), bool(re.search(r"\\w", "é", re.ASCII)))',
                           (False, True), (True, False)),
    "codeact_re_template": ('import re\n(re.sub(r"(a)", r"\\1_", "ab"), re.sub("a", r"\\n", "a"))', ("b", "\\n"),
                            ("a_b", "\n")),
    "codeact_re_sub": ('import re\nre.sub(r"a", lambda m: "x", "ab")', "error", "xb"),
    "codeact_re_subn": ('import re\nre.subn(r"a", "x", "ab")', "error", ("xb", 1)),
    "codeact_read_text": ('from pathlib import Path\nPath("x").read_text(encoding="utf-8")', "error", None),
    "codeact_open": ('open("x", errors="replace")', "error", None),
    "codeact_maketrans": ('str.maketrans("a", "b")', "error", {97: 98}),
    "codeact_translate": ('"ab".translate({97: "x"})', "error", "xb"),
    "codeact_len": ("class A:\n    def __len__(self):\n        return 2\nlen(A())", "error", 2),
    "codeact_cmp": ("class A:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, o):\n"
                    "        return self.n < o.n\nA(1) < A(2)", "error", True),
    "codeact_sorted": ("class A:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, o):\n"
                       "        return self.n < o.n\n[a.n for a in sorted([A(2), A(1)])]", "error", [1, 2]),
    "codeact_min": ("class A:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, o):\n"
                    "        return self.n < o.n\nmin([A(2), A(1)]).n", "error", 1),
    "codeact_max": ("class A:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, o):\n"
                    "        return self.n < o.n\nmax([A(2), A(1)]).n", "error", 2),
    "codeact_dataclasses": ("from dataclasses import dataclass\n@dataclass(order=True)\nclass P:\n    x: int\n"
                            "P(1) < P(2)", "error", True),
    "codeact_vars": ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\nvars(P(1))", "error",
                     {"x": 1}),
    "codeact_heapq": ("import heapq", "error", None),
    "codeact_set": ("(list({3, 1, 2}), list(set([30, 1, 2])))", ([3, 1, 2], [30, 1, 2]), ([1, 2, 3], [1, 2, 30])),
    "codeact_StringIO": ("import io", "error", None),
    "codeact_ChainMap": ("from collections import ChainMap", "error", None),
    "codeact_cmp_to_key": ("from functools import cmp_to_key", "error", None),
    "codeact_total_ordering": ("from functools import total_ordering", "error", None),
    "codeact_TypedDict": ("from typing import TypedDict", "error", None),
    "codeact_ConfigParser": ("import configparser", "error", None),
    "codeact_urlparse": ("import urllib.parse", "error", None),
    "codeact_Template": ("from string import Template", "error", None),
    "codeact_set_method": ("{1, 2}.union({3}, {4})", "error", {1, 2, 3, 4}),
    "codeact_set_call": ("set.intersection({1, 2}, {2})", "error", {2}),
}


def test_every_gap_has_a_program():
    assert set(GAP_PROGRAMS) == set(prelude.GAPS)


@pytest.mark.parametrize("helper", sorted(GAP_PROGRAMS))
def test_the_gap_each_helper_covers_is_still_there(helper):
    """Fails once pydantic-monty closes the gap: then delete the helper and the rewrite that calls it."""
    code, sandbox, _cpython = GAP_PROGRAMS[helper]
    got = bare(code)
    if sandbox == "error":
        assert isinstance(got, str) and got.startswith("error:"), (helper, got)
    else:
        assert got == sandbox, (helper, got)


@pytest.mark.parametrize("helper", sorted(GAP_PROGRAMS))
def test_the_cpython_answer_of_each_gap_program(helper):
    """The third column is what CPython says (so the sandbox's answer above is a real difference)."""
    code, _sandbox, cpython = GAP_PROGRAMS[helper]
    if cpython is None:
        return  # an import or a file: CPython runs it; nothing to compare
    *body, last = code.split("\n")
    namespace: dict[str, Any] = {}
    exec("\n".join(body), namespace)  # noqa: S102 - the test's own literal programs
    assert eval(last, namespace) == cpython  # noqa: S307


def test_every_helper_defines_cleanly_in_the_bare_sandbox():
    source = prelude.source_for(set(prelude.GAPS), ordered=("P",))
    assert bare(source + "'defined'") == "defined"


def test_only_what_a_program_names_is_sent():
    assert prelude.source_for(set()) == "\n"
    source = prelude.source_for({"codeact_len"})
    assert "def codeact_len" in source and "codeact_heapq" not in source
    assert "import re" not in source and '"""' not in source  # no docstrings, no annotations
    assert "codeact_less" in prelude.source_for({"codeact_heapq"})  # what a helper uses comes along


@pytest.mark.parametrize("pattern, flags, text", [
    (r"b$", 0, "ab\n"), (r"b$", 0, "ab\n\n"), (r"b\Z", 0, "ab\n"), (r"(?m)b$", 0, "ab\ncd"), (r"[$]", 0, "a$"),
    (r"\$", 0, "a$"), (r"\w+", 256, "café"), (r"(?a)\w+", 0, "café"), (r"[\w-]+", 256, "é-a"), (r"\bé", 256, " é"),
    (r"\d+\s", 256, "٣3 "), (r"^.*$", 0, "x\ny"), (r"a$|b", 8, "a\nb"),
])
def test_a_translated_pattern_matches_as_cpython_does(pattern, flags, text):
    import re

    from codeact.core.prelude.text import codeact_re_translate

    translated = codeact_re_translate(pattern, flags)
    got = bare(f"import re\nre.findall({translated!r}, {text!r}, {flags})")
    assert got == re.findall(pattern, text, flags), translated


@pytest.mark.parametrize("template", [r"\1_", r"\1\2", r"\g<1>x", r"\\1", r"a\n\1", r"\10", r"\1 0"])
def test_a_translated_template_replaces_as_cpython_does(template):
    import re

    from codeact.core.prelude.text import codeact_re_translate_template

    pattern, text = r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "abcdefghij!"
    got = bare(f"import re\nre.sub({pattern!r}, {codeact_re_translate_template(template)!r}, {text!r})")
    assert got == re.sub(pattern, template, text)


def test_the_rewrite_never_moves_or_changes_a_line_it_need_not():
    from codeact.core.rewrite import rewrite_for_sandbox

    code = ("import re, heapq\nfrom dataclasses import (\n    dataclass,\n    asdict,\n)\n"
            "x = re.sub(r'(a)', r'\\1_', 'ab')\nmsgs = ['a']\nlongest = max(msgs, key=len)\n"
            "unique = list(dict.fromkeys(msgs))\ny = 1 + 2\n")
    new, helpers, _notes = rewrite_for_sandbox(code)
    assert len(new.splitlines()) == len(code.splitlines())
    kept = [i for i, line in enumerate(code.splitlines()) if line.startswith(("msgs", "unique", "y ="))]
    assert all(new.splitlines()[i] == code.splitlines()[i] for i in kept)
    assert "codeact_heapq" in helpers and "\\\\g<1>_" in new.splitlines()[5]


def test_a_set_of_ints_is_built_in_cpythons_order():
    import random

    from codeact.core.prelude.objects import codeact_set_order

    rng = random.Random(7)
    for _ in range(300):
        items = [rng.choice([rng.randint(-50, 50), rng.randint(0, 10**6), rng.randint(-10**12, 10**12), True, -1, -2])
                 for _ in range(rng.randint(0, 200))]
        assert [repr(x) for x in codeact_set_order(items)] == [repr(x) for x in set(items)]
    source = prelude.source_for({"codeact_set"})
    items = [rng.randint(0, 10**6) for _ in range(500)]
    assert bare(source + f"list(codeact_set({items!r}))") == list(set(items))


def test_the_codec_table_is_cpythons_and_names_resolve_as_cpython_resolves_them():
    """codeact_CODECS holds every name CPython's encodings.aliases gives the codecs the sandbox decodes, and
    codeact_codec finds a codec by any spelling as codecs.lookup does (round 10: 'UTF-8-SIG' and 'u16' were read
    by their raw spelling, silently wrong)."""
    import codecs
    import encodings.aliases

    from codeact.core.prelude.files import codeact_codec, codeact_CODECS

    decoded = set(codeact_CODECS.values())
    assert {name: codec for name, codec in encodings.aliases.aliases.items() if codec in decoded} | {
        codec: codec for codec in decoded} == codeact_CODECS
    spellings = [*codeact_CODECS, "UTF-8-SIG", "utf_8_sig", "U16", "Utf 16", "utf--16", "UTF-16LE", "utf-16-be",
                 "latin-1", "ISO-8859-1", "us-ascii", "ANSI_X3.4-1968", "u32", "utf-32be", "  utf8 ", "cp1252",
                 "shift_jis", "koi8-r", "utf-7", "x", "", "utf-8\u00e9"]
    for spelling in spellings:
        try:
            expected = codecs.lookup(spelling).name.replace("-", "_")
        except LookupError:
            expected = None
        expected = {"iso8859_1": "latin_1", "us_ascii": "ascii"}.get(expected, expected) if expected else None
        got = codeact_codec(spelling)
        assert got == (expected if expected in decoded else None), (spelling, got, expected)
    source = prelude.source_for({"codeact_codec"})
    assert bare(source + "[codeact_codec(n) for n in ('UTF-8-SIG', 'U16', 'Latin 1', 'cp1252')]") == [
        "utf_8_sig", "utf_16", "latin_1", None]


def test_a_config_text_with_long_blank_runs_is_read_in_the_child() -> None:
    """Round 14: CPython's option pattern backtracks over a run of blanks (100,000 on a line: minutes, in the
    host); such a text counts as the runs' squares and goes to the child, killed at the deadline."""
    from codeact.backends.host_modules import IN_PROCESS_WORK, _work

    usual = "[metadata]\nname = x\nversion = 1.0\n\n[options]\npackages =\n    a\n    b\n" * 200
    assert _work("codeact_host.configparse", (usual,), {})[1] <= IN_PROCESS_WORK
    assert _work("codeact_host.configparse", ("[s]\nx" + " " * 2_000 + "y\n",), {})[1] > IN_PROCESS_WORK


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("textwrap.wrap", ("ab" * 495_000,), {"width": 1}),  # a long word: each line cut copies the rest of it
    ("textwrap.fill", ("ab" * 2_000,), {"width": 10, "initial_indent": " " * 20}),  # the indent leaves no room
    ("pprint.pformat", ("a " * 85_000,), {"width": 169_000}),  # every word reprs the line so far
    ("pprint.pp", (["a " * 5_000] * 4,), {"width": 10_000}),
    ("shlex.split", ("'" + "a" * 200_000 + "'",), {}),  # a token grows a character at a time
    ("textwrap.dedent", (" " * 200_000 + "x",), {}),  # the margin becomes a pattern's text
])
def test_host_calls_quadratic_in_cpython_count_their_worst_case(name: str, args: tuple, kwargs: dict) -> None:
    """Round 20: the estimate of a host call is an upper bound of CPython's worst case, so a call whose cost grows
    as its argument squared goes to the child (killed at the deadline), never run in the host unbounded."""
    from codeact.backends.host_modules import IN_PROCESS_WORK, _work

    assert _work(name, args, kwargs)[1] > IN_PROCESS_WORK


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("textwrap.wrap", ("hello world " * 10_000,), {"width": 40}),
    ("textwrap.shorten", ("ab" * 100_000, 20), {}),  # one line: one cut
    ("pprint.pformat", (list(range(30_000)),), {}),
    ("pprint.pformat", ({"k": "a short value " * 3} ,), {}),
    ("shlex.split", ("ls -la 'my file' \"other one\" x\\ y",), {}),
    ("textwrap.dedent", ("    a\n    b\n" * 1_000,), {}),
])
def test_usual_host_calls_stay_in_the_host(name: str, args: tuple, kwargs: dict) -> None:
    from codeact.backends.host_modules import IN_PROCESS_WORK, _work

    assert _work(name, args, kwargs)[1] <= IN_PROCESS_WORK
