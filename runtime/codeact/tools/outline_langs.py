"""outline's languages other than Python: tree-sitter grammars from PyPI wheels, and what each node kind means.

One table (:data:`LANGUAGES`) says, per language, the file endings it reads, its grammar (a wheel installed with the
runtime; none is ever downloaded), which syntax nodes are definitions and of what ``kind``, and which are imports.
A query made from the table finds those nodes in C; the few found are named here. A function inside a type is a
``method`` and the type's name leads its ``qualname`` (``Cls.meth``); a Go method's type is its receiver's, a Rust
one's its ``impl``'s, a C++ one's its ``Cls::`` qualifier. An import's ``name`` is what it imports, as written.
docs/running.md lists the mapping per language.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from collections.abc import Mapping
from operator import itemgetter
from typing import Any, NamedTuple

Item = tuple[str, "str | None", "str | None", "int | None", "int | None", "str | None", list[str], list[str]]
# (kind, name, qualname, line, end_line, docstring, bases, decorators): an item less its path


class Language(NamedTuple):
    """One language outline reads: its name as shown, file endings, grammar (``module:function``), definitions
    (node kind -> item kind, or ``None`` where :func:`_kind_of` decides), imports and the extra query patterns."""

    name: str
    endings: tuple[str, ...]
    grammar: str
    defs: Mapping[str, str | None]
    imports: tuple[str, ...] = ()
    extra: str = ""  # more query patterns, each capturing @def or @import


_TYPES_JS = {"class_declaration": "class", "class": "class", "function_declaration": "function",
             "generator_function_declaration": "function", "method_definition": "method"}
_TYPES_TS = {**_TYPES_JS, "abstract_class_declaration": "class", "interface_declaration": "interface",
             "type_alias_declaration": "type", "enum_declaration": "enum", "internal_module": "module",
             "method_signature": "method", "abstract_method_signature": "method", "function_signature": "function"}
_ARROWS = ("(variable_declarator name: (identifier) value: [(arrow_function) (function_expression) "
           "(generator_function)]) @def\n"
           '(call_expression function: (identifier) @f arguments: (arguments . (string)) (#eq? @f "require")) @import')
_CLIKE_C = {"function_definition": "function", "struct_specifier": None, "enum_specifier": None,
            "union_specifier": None, "type_definition": "type"}

LANGUAGES: tuple[Language, ...] = (
    Language("JavaScript", (".js", ".mjs", ".cjs", ".jsx"), "tree_sitter_javascript:language", _TYPES_JS,
             ("import_statement",), _ARROWS),
    Language("TypeScript", (".ts", ".mts", ".cts"), "tree_sitter_typescript:language_typescript", _TYPES_TS,
             ("import_statement",), _ARROWS),
    Language("TSX", (".tsx",), "tree_sitter_typescript:language_tsx", _TYPES_TS, ("import_statement",), _ARROWS),
    Language("Go", (".go",), "tree_sitter_go:language",
             {"function_declaration": "function", "method_declaration": "method", "type_spec": None,
              "type_alias": "type", "method_elem": "method"}, ("import_spec",)),
    Language("Rust", (".rs",), "tree_sitter_rust:language",
             {"function_item": "function", "function_signature_item": "function", "struct_item": "struct",
              "enum_item": "enum", "trait_item": "trait", "type_item": "type", "union_item": "struct",
              "mod_item": "module", "impl_item": None}, ("use_declaration", "extern_crate_declaration")),
    Language("Java", (".java",), "tree_sitter_java:language",
             {"class_declaration": "class", "record_declaration": "class", "interface_declaration": "interface",
              "annotation_type_declaration": "interface", "enum_declaration": "enum", "method_declaration": "method",
              "constructor_declaration": "method", "compact_constructor_declaration": "method"},
             ("import_declaration",)),
    Language("C#", (".cs",), "tree_sitter_c_sharp:language",
             {"class_declaration": "class", "record_declaration": "class", "struct_declaration": "struct",
              "interface_declaration": "interface", "enum_declaration": "enum", "delegate_declaration": "type",
              "namespace_declaration": "module", "file_scoped_namespace_declaration": "module",
              "method_declaration": "method", "constructor_declaration": "method", "local_function_statement":
              "function"}, ("using_directive",)),
    Language("C", (".c", ".h"), "tree_sitter_c:language", _CLIKE_C, ("preproc_include",)),
    Language("C++", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
             "tree_sitter_cpp:language",
             {**_CLIKE_C, "class_specifier": None, "namespace_definition": "module", "alias_declaration": "type",
              "concept_definition": "type"}, ("preproc_include", "using_declaration")),
    Language("Ruby", (".rb", ".rake", ".gemspec"), "tree_sitter_ruby:language",
             {"class": "class", "module": "module", "method": "function", "singleton_method": "method"}, (),
             '(call method: (identifier) @m (#match? @m "^(require|require_relative|load)$")) @import'),
    Language("PHP", (".php",), "tree_sitter_php:language_php",
             {"class_declaration": "class", "interface_declaration": "interface", "trait_declaration": "trait",
              "enum_declaration": "enum", "function_definition": "function", "method_declaration": "method",
              "namespace_definition": "module"}, ("namespace_use_declaration",)),
    Language("Kotlin", (".kt", ".kts"), "tree_sitter_kotlin:language",
             {"class_declaration": None, "object_declaration": "class", "function_declaration": "function",
              "type_alias": "type"}, ("import",)),
)
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "module"})  # what owns methods
KINDS = ("class", "struct", "interface", "trait", "enum", "type", "module", "function", "method", "import", "error")
BY_ENDING: dict[str, Language] = {ending: lang for lang in LANGUAGES for ending in lang.endings}


def language_of(name: str) -> Language | None:
    """The language a file name's ending says, if outline reads it this way (Python is not here)."""
    dot = name.rfind(".")
    return BY_ENDING.get(name[dot:].lower()) if dot >= 0 else None


# A file parsed in the process that asks (the host) must be small: tree-sitter's query over an error node of many
# children (``x = [[[[...``, ``{{{{`` in C, ``- - - -`` in JavaScript) is quadratic, its parse of an ambiguous C++
# file takes memory a thousand times its size, and neither can be stopped once begun. Larger files, and those whose
# reading below would walk far (:data:`WALK_BUDGET`), are parsed in an outline worker, which the run's deadline
# and memory limit end (codeact.tools.outline).
IN_PROCESS_BYTES = 16 * 1024
# Steps up from a definition to its owner (``Node.parent``, which tree-sitter finds by walking down from the root),
# each counted as the file's size: a method deep in blocks of a class costs its depth at every step.
WALK_BUDGET = 1 << 24


class TooCostly(Exception):
    """A file :func:`outline_source` does not read in this process when ``bounded``: a worker reads it."""


_parsers: dict[str, Any] = {}


def _parser(lang: Language) -> tuple[Any, Any]:
    """The language's parser and query cursor, made once per process."""
    found = _parsers.get(lang.name)
    if found is None:
        import importlib

        from tree_sitter import Language as Grammar
        from tree_sitter import Parser, Query, QueryCursor

        module, _, function = lang.grammar.partition(":")
        grammar = Grammar(getattr(importlib.import_module(module), function)())
        patterns = [f"({kind}) @def" for kind in lang.defs] + [f"({kind}) @import" for kind in lang.imports]
        query = Query(grammar, "\n".join([*patterns, lang.extra]))
        found = _parsers[lang.name] = (Parser(grammar), QueryCursor(query))  # a cursor starts afresh each run
    return found  # type: ignore[no-any-return]


def outline_source(lang: Language, data: bytes, bounded: bool = False) -> list[Item]:
    """The items of one file's bytes, in source order; a parse error first, as an ``error`` item. ``bounded``:
    raise :class:`TooCostly` rather than read a file over :data:`IN_PROCESS_BYTES` or walk past
    :data:`WALK_BUDGET`."""
    if bounded and len(data) > IN_PROCESS_BYTES:
        raise TooCostly
    parser, cursor = _parser(lang)
    tree = parser.parse(data)
    if tree.root_node.has_error and lang.name in _DIRECTIVES:
        blanked = _DIRECTIVES[lang.name].sub(lambda found: b" " * len(found[0]), data)
        again = parser.parse(blanked) if blanked != data else tree
        if not again.root_node.has_error:
            tree = again  # every branch of each #if read as code: the same lines, and it parses
    root = tree.root_node
    items: list[Item] = []
    if root.has_error:
        items.append(_error_item(lang, root))
    captures = cursor.captures(root)
    found = [(node.start_byte, "def", node) for node in captures.get("def", ())]
    found += [(node.start_byte, "import", node) for node in captures.get("import", ())]
    found.sort(key=itemgetter(0))
    owners_of: dict[int, tuple[list[str], bool]] = {}  # a type's node id -> the owners of its items, and whether
    # it is a type (not a module); ``reach``: where the last of those types ends (a node past it is in none of them)
    reach = -1
    defs, broken = lang.defs, root.has_error
    walk = [WALK_BUDGET // max(len(data), 1) if bounded else -1]  # parent steps left; negative: no bound
    for _, what, node in found:
        if what == "import":
            items.append(_import_item(node))
            continue
        of_type = node.type
        kind = defs.get(of_type, "function") or _kind_of(node)
        named = node.child_by_field_name("name")
        if named is None:
            named = _name_node(node, of_type)
        raw = named.text if named is not None else None
        text = raw.decode("utf-8", "replace") if raw is not None else ""
        name = text.rpartition("::")[2] if ("::" in text or not text) and named is not None and \
            named.type == "qualified_identifier" else text or None
        if broken and name in _KEYWORDS:
            continue  # the parser's misreading near an error: C#'s `else if (...)` after `#if` as a function `if`
        end = node.end_byte
        owners, in_type = _owners(node, owners_of, walk) if end <= reach else ([], False)
        if of_type == "function_definition":
            owners, in_type = _qualified(node, owners, in_type)
        if kind is None or kind in TYPE_KINDS:
            owners_of[node.id] = ([*owners, name or "<anonymous>"], kind != "module")
            reach = max(reach, end)
        if kind is None:
            continue  # a Rust impl: its methods name its type
        if kind in ("function", "method"):
            receiver = _receiver(node) if of_type == "method_declaration" else []
            kind = "method" if in_type or receiver or of_type in _METHODS or (owners and lang.name == "Ruby") \
                else "function"
            owners = owners or receiver
        qualname = ".".join([*owners, name]) if name is not None else None
        line = (named if named is not None else node).start_point[0] + 1  # the name's, not an annotation's
        items.append((kind, name, qualname, line, node.end_point[0] + 1, None, [], []))
    return items


# C#'s grammar reads an #if only around whole statements or members: one inside an enum's members or an if/else
# chain throws the rest of the file off (the methods after it lose their class). Such a file is read again with
# its directive lines blanked (same lines and columns), and that reading kept where it parses.
_DIRECTIVES = {"C#": re.compile(rb"(?m)^[ \t]*#[ \t]*(?:if|elif|else|endif|region|endregion)\b[^\n]*")}

# Nodes that are always a method: also in a body that is no named type (Java's `new Adapter<T>() { T read() }`)
_METHODS = frozenset(("method_declaration", "method_definition"))

# Statement keywords no definition can be named: one so named is the parser's error recovery at work
_KEYWORDS = frozenset(("if", "else", "for", "foreach", "while", "do", "switch", "case", "catch", "return", "using",
                       "lock", "fixed", "try", "finally", "throw", "new"))


def _error_item(lang: Language, root: Any) -> Item:
    """The first place the parser could not read: an ERROR node, or a token it had to assume (MISSING)."""
    node = root
    while True:
        nxt = next((child for child in node.children if child.has_error or child.is_missing or child.is_error),
                   None)
        if nxt is None or node.is_error or node.is_missing:
            break
        node = nxt
    line = node.start_point[0] + 1
    what = f"missing {node.type!r}" if node.is_missing else "syntax it cannot read"
    return ("error", None, None, line, node.end_point[0] + 1,
            f"{lang.name} parse error: {what} at line {line}, column {node.start_point[1] + 1} (tree-sitter); "
            "the items around it are the parser's best reading", [], [])


def _text(node: Any) -> str:
    text = node.text if node is not None else None
    return text.decode("utf-8", "replace") if text is not None else ""


_DECLARATOR = ("function_declarator", "pointer_declarator", "reference_declarator", "array_declarator",
               "parenthesized_declarator", "qualified_identifier", "template_function")


def _name_node(node: Any, of_type: str) -> Any:
    """The node naming a definition (of type ``of_type``) that has no ``name`` field: what its declarator (C, C++)
    or first identifier says."""
    named = None
    if of_type == "type_definition":
        named = node.child_by_field_name("declarator")
    if named is None and of_type == "function_definition":
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type in _DECLARATOR and declarator.type != "qualified_identifier":
            declarator = declarator.child_by_field_name("declarator") or declarator.child_by_field_name("name")
        named = declarator
    if named is None and of_type == "impl_item":
        named = node.child_by_field_name("type")
    if named is None:
        named = next((c for c in node.named_children if c.type in ("identifier", "type_identifier", "constant")),
                     None)
    return named


def _kind_of(node: Any) -> str | None:
    """The kind of a node the table leaves open: a Go ``type_spec`` by its type, a C/C++ struct only with a body,
    a Kotlin class by its keyword, a Rust ``impl`` not at all (its methods name its type)."""
    kind = node.type
    if kind == "type_spec":
        inner = node.child_by_field_name("type")
        return {"struct_type": "struct", "interface_type": "interface"}.get(inner.type if inner else "", "type")
    if kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        if node.child_by_field_name("body") is None:
            return None  # a use of the type (``struct P p;``), not its definition
        return {"enum_specifier": "enum", "class_specifier": "class"}.get(kind, "struct")
    if kind == "class_declaration":  # Kotlin
        words = {_text(c) for c in node.children if not c.is_named}
        modifiers = _text(next((c for c in node.children if c.type == "modifiers"), None))
        return "interface" if "interface" in words else "enum" if re.search(r"\benum\b", modifiers) else "class"
    return None  # impl_item


def _owners(node: Any, owners_of: dict[int, tuple[list[str], bool]], walk: list[int]) -> tuple[list[str], bool]:
    """The names of the types, modules and Rust ``impl`` blocks that enclose ``node`` (outermost first), and whether
    the innermost is a type (so a function there is a method): the innermost one's, kept in ``owners_of`` when it
    was read, unless a function lies between (its own scope, not a method). Each step up takes one of ``walk``'s
    steps left (:class:`TooCostly` when none is; a negative count is no bound)."""
    parent = node.parent
    while parent is not None:
        walk[0] -= 1
        if walk[0] == -1:
            raise TooCostly
        owner = owners_of.get(parent.id)
        if owner is not None:
            return [*owner[0]], owner[1]
        if parent.type in _FUNCTIONS:
            break
        parent = parent.parent
    return [], False


def _qualified(node: Any, owners: list[str], in_type: bool) -> tuple[list[str], bool]:
    """A C++ function's owners with its ``Cls::`` qualifier last (``void Cls::meth() {...}``: a method)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in _DECLARATOR:
        if declarator.type == "qualified_identifier":
            scope = _text(declarator).rpartition("::")[0]
            return owners + [part for part in scope.split("::") if part], True
        declarator = declarator.child_by_field_name("declarator")
    return owners, in_type


_FUNCTIONS = frozenset({"function_declaration", "function_definition", "method_definition", "method_declaration",
                        "function_item", "method", "singleton_method", "constructor_declaration", "arrow_function",
                        "function_expression", "local_function_statement", "generator_function_declaration"})


def _receiver(node: Any) -> list[str]:
    """A Go method's receiver type (``func (s *Server) Serve()``: ``Server``), as its owner."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return []
    found = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[.*?\]", "", _text(receiver)))
    return found[-1:]


_IMPORT_WORDS = re.compile(r"^\s*(?:import|using|use|extern\s+crate|#\s*include|require_relative|require|load)"
                           r"(?:\s+(?:static|type|typeof|function|const|global))?\s*")


def _import_item(node: Any) -> Item:
    """An import: ``name`` what it imports as written (the module of a JS ``from``; the path of an include)."""
    source = (node.child_by_field_name("source") or node.child_by_field_name("path")
              or node.child_by_field_name("argument"))
    if node.type in ("call", "call_expression"):  # Ruby's require, CommonJS's require("x")
        args = node.child_by_field_name("arguments")
        source = args.named_children[0] if args is not None and args.named_children else None
    text = _text(source) if source is not None else _IMPORT_WORDS.sub("", _text(node))
    name = text.strip().rstrip(";").strip().strip("\"'<>`") or None
    line = node.start_point[0] + 1
    return ("import", name, name, line, node.end_point[0] + 1, None, [], [])


__all__ = ["BY_ENDING", "IN_PROCESS_BYTES", "KINDS", "LANGUAGES", "Item", "Language", "TooCostly", "language_of",
           "outline_source"]
