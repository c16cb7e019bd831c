"""outline in every language it reads (issue 42 item 2): one fixture a language (tests/runtime/fixtures/outline/),
its items written out by hand after reading the source, and every fixture checked against the parser's own tree:
each definition and import node tree-sitter finds in a full walk is one item, at the line of its name."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from codeact.tools.outline_langs import LANGUAGES, language_of, outline_source

FIXTURES = Path(__file__).with_name("fixtures") / "outline"

EXPECTED = {
    'A.java': [
        ('import', 'java.util.List', 2), ('import', 'java.lang.Math.max', 3), ('class', 'A', 4),
        ('method', 'A.A', 5), ('method', 'A.m', 6), ('interface', 'A.I', 7), ('method', 'A.I.f', 7),
        ('enum', 'A.E', 8), ('class', 'A.R', 9),
    ],
    'a.c': [
        ('import', 'stdio.h', 1), ('import', 'local.h', 2), ('type', 'P', 3), ('struct', 'P', 3), ('struct', 'Q', 4),
        ('enum', 'E', 6), ('function', 'f', 7), ('function', 'main', 8),
    ],
    'a.cpp': [
        ('import', 'vector', 1), ('module', 'n', 2), ('class', 'n.C', 2), ('method', 'n.C.inl', 2),
        ('method', 'n.C.m', 3), ('type', 'T', 4), ('struct', 'S', 5), ('method', 'S.g', 5),
        ('function', 'free_fn', 6),
    ],
    'a.cs': [
        ('import', 'System', 1), ('import', 'System.Math', 2), ('module', 'N', 3), ('class', 'N.C', 4),
        ('method', 'N.C.C', 4), ('method', 'N.C.M', 4), ('function', 'L', 4), ('struct', 'N.S', 5),
        ('interface', 'N.I', 6), ('method', 'N.I.F', 6), ('enum', 'N.E', 7), ('class', 'N.R', 8), ('type', 'N.D', 9),
    ],
    'a.go': [
        ('import', 'fmt', 3), ('import', 'strings', 4), ('struct', 'Server', 6), ('interface', 'Handler', 7),
        ('method', 'Handler.Serve', 7), ('type', 'ID', 8), ('type', 'Num', 9), ('method', 'Server.Serve', 10),
        ('method', 'Generic.Get', 11), ('function', 'main', 12),
    ],
    'a.js': [
        ('import', './x.js', 1), ('import', 'y', 2), ('class', 'A', 3), ('method', 'A.m', 3), ('function', 'f', 4),
        ('function', 'g', 5),
    ],
    'a.kt': [
        ('import', 'x.y.Z', 2), ('interface', 'I', 3), ('method', 'I.f', 4), ('enum', 'E', 6), ('class', 'K', 7),
        ('method', 'K.f', 8), ('class', 'O', 10), ('method', 'O.g', 11), ('type', 'T', 13), ('function', 'top', 14),
    ],
    'a.php': [
        ('module', 'App', 2), ('import', 'Foo\\Bar', 3), ('interface', 'I', 4), ('method', 'I.f', 4),
        ('trait', 'T', 5), ('method', 'T.t', 5), ('class', 'C', 6), ('method', 'C.f', 6), ('enum', 'E', 7),
        ('function', 'top', 8),
    ],
    'a.rb': [
        ('import', 'json', 1), ('import', 'x', 2), ('module', 'M', 3), ('class', 'M.A::B', 4),
        ('method', 'M.A::B.m', 5), ('method', 'M.A::B.s', 6), ('function', 'top', 9),
    ],
    'a.rs': [
        ('import', 'std::collections::HashMap', 1), ('import', 'crate::x::{a, b}', 2), ('module', 'inner', 3),
        ('function', 'inner.f', 3), ('struct', 'P', 4), ('enum', 'E', 5), ('trait', 'T', 6), ('method', 'T.t', 6),
        ('method', 'T.d', 6), ('type', 'Alias', 7), ('method', 'P.new', 8), ('method', 'P.t', 9),
        ('function', 'main', 10),
    ],
    'a.ts': [
        ('import', 'zod', 1), ('import', 'fs', 2), ('interface', 'Shape', 3), ('method', 'Shape.area', 3),
        ('type', 'Id', 4), ('enum', 'Color', 5), ('module', 'NS', 6), ('function', 'NS.inner', 6),
        ('class', 'Base', 7), ('method', 'Base.constructor', 8), ('method', 'Base.area', 9),
        ('function', 'helper', 9), ('method', 'Base.make', 10), ('function', 'arrow', 12), ('function', 'top', 13),
        ('function', 'nested', 13),
    ],
    'a.tsx': [
        ('import', 'react', 1), ('type', 'Props', 2), ('function', 'Hello', 3), ('class', 'Box', 4),
        ('method', 'Box.render', 4),
    ],
}


def test_every_language_has_a_fixture():
    covered = {language_of(name).name for name in EXPECTED}  # type: ignore[union-attr]
    assert covered == {lang.name for lang in LANGUAGES}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_items_of_each_language(name):
    lang = language_of(name)
    assert lang is not None
    items = outline_source(lang, (FIXTURES / name).read_bytes())
    assert [(kind, qualname, line) for kind, _, qualname, line, *_ in items] == EXPECTED[name]


def _walk(node: Any) -> list[Any]:
    """Every node of the tree, in order: the oracle reads the tree itself, with no query."""
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_agrees_with_the_parsers_own_tree(name):
    from tree_sitter import Language, Parser

    lang = language_of(name)
    assert lang is not None
    module, _, function = lang.grammar.partition(":")
    data = (FIXTURES / name).read_bytes()
    tree = Parser(Language(getattr(importlib.import_module(module), function)())).parse(data)
    nodes = _walk(tree.root_node)
    defs = [n for n in nodes if n.is_named and n.type in lang.defs and n.type != "impl_item"
            and not (n.type.endswith("_specifier") and n.child_by_field_name("body") is None)]
    arrows = [n for n in nodes if n.type == "variable_declarator" and n.child_by_field_name("value") is not None
              and n.child_by_field_name("value").type in ("arrow_function", "function_expression")]
    imports = [n for n in nodes if (n.is_named and n.type in lang.imports) or (
        n.type in ("call", "call_expression") and (n.child_by_field_name("method") or n.child_by_field_name(
            "function")) is not None and (n.child_by_field_name("method") or n.child_by_field_name(
                "function")).text in (b"require", b"require_relative", b"load"))]
    items = outline_source(lang, data)
    assert not tree.root_node.has_error and "error" not in {i[0] for i in items}
    assert len([i for i in items if i[0] == "import"]) == len(imports)
    assert len([i for i in items if i[0] != "import"]) == len(defs) + len(arrows)
    name_lines = set()
    for node in [*defs, *arrows]:
        named = node.child_by_field_name("name") or node.child_by_field_name("declarator") or node
        while named.child_by_field_name("declarator") is not None:
            named = named.child_by_field_name("declarator")
        name_lines.add(named.start_point[0] + 1)
    assert {i[3] for i in items if i[0] != "import"} == name_lines


BROKEN = {".py": "def f(:\n", ".ts": "class A {\n  m( {\n}\n", ".go": "package x\nfunc (\n", ".rs": "fn f( {\n",
          ".java": "class A { void m( }\n", ".cs": "class A { void M( }\n", ".c": "int f( {\n",
          ".cpp": "class A { void m( };\n", ".rb": "def f(\n", ".php": "<?php\nfunction f( {\n",
          ".kt": "fun f( {\n", ".js": "function f( {\n", ".tsx": "const x = <div>;\n"}


@pytest.mark.parametrize("ending", sorted(BROKEN))
def test_a_parse_error_is_an_error_item_first(tmp_path, make_ctx, ending):
    from codeact.tools.outline import outline

    (tmp_path / f"broken{ending}").write_text(BROKEN[ending])
    items = outline(make_ctx(tmp_path.resolve()))
    assert items and items[0]["kind"] == "error" and items[0]["line"] is not None, items
    assert items[0]["docstring"]


def test_a_file_outline_cannot_read_is_named_in_a_note(tmp_path, make_ctx):
    from codeact.core import notices
    from codeact.tools.outline import outline

    (tmp_path / "notes.md").write_text("# x\n")
    (tmp_path / "main.go").write_text("package main\nfunc main() {}\n")
    collector = notices.Notes()
    previous = collector.activate()
    try:
        assert outline(make_ctx(tmp_path.resolve()), path="notes.md") == []
        assert outline(make_ctx(tmp_path.resolve()), glob="*.zig") == []
        everything = outline(make_ctx(tmp_path.resolve()), glob="*")
    finally:
        notices.restore(previous)
    assert [i["qualname"] for i in everything] == ["main"]
    assert collector.items[0].startswith("outline(): 1 of 1 files matching path='notes.md' are in no language "
                                         "outline reads, by ending: .md (1); it reads Python, JavaScript")
    assert collector.items[1] == "outline(): no file matches path='.', glob='*.zig'"
    assert "1 of 2 files matching path='.', glob='*' are in no language outline reads, by ending: .md (1)" in (
        collector.items[2])


CSHARP_IF_SPLIT = """\
class Converter
{
    public void Write(object value)
    {
        string text;
        if (value is int number)
        {
            text = number.ToString();
        }
#if HAVE_OFFSET
        else if (value is long offset)
        {
            text = offset.ToString();
        }
#endif
        else
        {
            throw new Exception("unexpected");
        }
        Use(text);
    }

    void Use(string x) { }
}

class Other { void Broken( }
"""


def test_a_statement_the_parser_misreads_is_no_definition(tmp_path, make_ctx):
    """Newtonsoft.Json (real, issue 42's evaluation): an ``#if`` splitting an ``if``/``else if`` chain makes
    tree-sitter-c-sharp read ``else if (...) { ... }`` as a local function named ``if``.
    Where the file does not parse with its directive lines blanked either (``Other`` here), it gets its ``error``
    item; no definition is named after a statement keyword; the real ones stay."""
    from codeact.tools.outline import outline

    (tmp_path / "Converter.cs").write_text(CSHARP_IF_SPLIT)
    items = outline(make_ctx(tmp_path.resolve()))
    assert [i["kind"] for i in items if i["kind"] == "error"] == ["error"]
    assert [(i["kind"], i["qualname"]) for i in items if i["kind"] != "error"][:3] == [
        ("class", "Converter"), ("method", "Converter.Write"), ("method", "Converter.Use")]
    assert not [i for i in items if i["name"] == "if"]


CSHARP_IF_IN_ENUM = """\
namespace N
{
    internal enum ReadType
    {
        Read,
#if HAVE_OFFSET
        ReadAsOffset,
#endif
        ReadAsDouble
    }

    public class Reader
    {
#region Parsing
        private void ParseNumber(int i) { }
#endregion

        public bool Read() { return true; }
    }
}
"""


def test_an_if_directive_inside_an_enum_leaves_the_methods_their_class(tmp_path, make_ctx):
    """Newtonsoft.Json's JsonTextReader (issue 42's evaluation): an ``#if`` among an enum's members threw the rest of
    the file off (its later methods read as functions with no class). Read again with its directive lines blanked,
    the file parses: no error item, the methods belong to their class, at their lines."""
    from codeact.tools.outline import outline

    (tmp_path / "Reader.cs").write_text(CSHARP_IF_IN_ENUM)
    items = outline(make_ctx(tmp_path.resolve()))
    assert [(i["kind"], i["qualname"], i["line"]) for i in items] == [
        ("module", "N", 1), ("enum", "N.ReadType", 3), ("class", "N.Reader", 12),
        ("method", "N.Reader.ParseNumber", 15), ("method", "N.Reader.Read", 18)]


def test_a_method_of_an_anonymous_class_is_a_method(tmp_path, make_ctx):
    """gson (issue 42's evaluation): the methods of ``new TypeAdapter<T>() { public T read(...) }`` were
    ``function`` items; Java has no functions."""
    from codeact.tools.outline import outline

    (tmp_path / "Factory.java").write_text(
        "class Factory {\n  Adapter create() {\n    return new Adapter() {\n      public Object read() {\n"
        "        return null;\n      }\n    };\n  }\n}\n")
    items = outline(make_ctx(tmp_path.resolve()))
    assert [(i["kind"], i["name"], i["line"]) for i in items] == [
        ("class", "Factory", 1), ("method", "create", 2), ("method", "read", 4)]
