"""What an import statement binds, by language: the name, and the key it means.

A handler reads one statement node captured as ``import`` and returns its
:class:`Binding` s; the module a statement names is turned into key parts
(:func:`repolens.chunking.refs.split_key`) from the file alone: a relative
import (``from ..models import X``, ``import './x'``, ``use super::m``) is
resolved against the importing file's path, an absolute one is kept as
spelled (the search matches it against the end of the defining file's path).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from tree_sitter import Node

from repolens.chunking.refs import module_parts, split_key
from repolens.record import Record


class Binding(Record):
    """One name an import or export statement binds (see :mod:`repolens.chunking.refs.extract`)."""

    bound: str  # the name bound in the importing file ("" none, "*" every name of target)
    target: str  # the key it means ("" for an export of a local name: resolved by the caller)
    line: int
    used: str = ""  # the imported definition's name, made a reference ("" for a module)
    reexport: bool = False  # other files may import it from here
    export: bool = False  # an export of this file's own name (``export default foo``)
    # Rust: a name another crate defines, as far as the file says (a ``use`` path not starting
    # ``crate``, ``self`` or ``super``; in a 2015 edition crate, perhaps a module of its own).
    foreign: bool = False


ImportHandler = Callable[[Node, bytes, str], list[Binding]]


def _text(node: Node | None, src: bytes) -> str:
    return "" if node is None else src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _key(parts: list[str]) -> str:
    return ".".join(p for p in parts if p)


# -- Python ---------------------------------------------------------------------


def python(node: Node, src: bytes, path: str) -> list[Binding]:
    out: list[Binding] = []
    if node.type == "import_statement":
        for child in node.named_children:
            if child.type == "dotted_name":
                dotted = _text(child, src)
                out.append(Binding(dotted.split(".")[0], dotted.split(".")[0], _line(child)))
            elif child.type == "aliased_import":
                dotted = _text(child.child_by_field_name("name"), src)
                alias = _text(child.child_by_field_name("alias"), src)
                out.append(Binding(alias, dotted, _line(child)))
        return out
    module = node.child_by_field_name("module_name")
    if module is None:
        return out
    base = _python_module(module, src, path)
    for child in node.named_children:
        if child == module:
            continue
        if child.type == "wildcard_import":
            out.append(Binding("*", base, _line(child), "*", reexport=True))
        elif child.type == "dotted_name":
            name = _text(child, src)
            out.append(Binding(name, _key([base, name]), _line(child), name.split(".")[-1], reexport=True))
        elif child.type == "aliased_import":
            name = _text(child.child_by_field_name("name"), src)
            alias = _text(child.child_by_field_name("alias"), src)
            out.append(Binding(alias, _key([base, name]), _line(child), name.split(".")[-1], reexport=True))
    return out


def _python_module(module: Node, src: bytes, path: str) -> str:
    """``a.b`` as written, or a relative module resolved against ``path``'s package."""
    text = _text(module, src)
    if module.type != "relative_import":
        return text
    dots = len(text) - len(text.lstrip("."))
    rest = text[dots:]
    package = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
    package = package[: max(len(package) - (dots - 1), 0)]
    return _key([*package, *(rest.split(".") if rest else [])])


# -- JavaScript, TypeScript ---------------------------------------------------------

_JS_EXTENSIONS = re.compile(r"\.(?:[cm]?[jt]sx?|d\.ts|json|vue|svelte)$")


def js_module(spec: str, path: str) -> str:
    """The key of the module ``spec`` names from ``path`` (``./x`` beside it,
    a package as named)."""
    if spec.startswith("."):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        joined = _JS_EXTENSIONS.sub("", joined)
        if joined.endswith("/index") or joined == "index":
            joined = joined[: -len("index")].rstrip("/")
        return _key(split_key(joined.lstrip("./")))
    return _key(split_key(spec.lstrip("@")))


def _js_source(node: Node, src: bytes, path: str) -> str | None:
    source = node.child_by_field_name("source")
    if source is None:
        return None
    return js_module(_text(source, src).strip("'\"`"), path)


def javascript(node: Node, src: bytes, path: str) -> list[Binding]:
    if node.type == "variable_declarator":
        return _require(node, src, path)
    module = _js_source(node, src, path)
    out: list[Binding] = []
    if node.type == "import_statement":
        if module is None:
            return out
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    name = _text(part, src)
                    out.append(Binding(name, _key([module, "default"]), _line(part), "default"))
                elif part.type == "namespace_import":
                    ident = part.named_children[-1] if part.named_child_count else None
                    out.append(Binding(_text(ident, src), module, _line(part)))
                elif part.type == "named_imports":
                    out.extend(_specifiers(part, src, module, reexport=False))
        return out
    # export_statement
    declaration = node.child_by_field_name("declaration")
    value = node.child_by_field_name("value")
    is_default = any(c.type == "default" for c in node.children)
    if module is not None:
        for part in node.named_children:
            if part.type == "export_clause":
                out.extend(_specifiers(part, src, module, reexport=True))
            elif part.type == "namespace_export":
                ident = part.named_children[-1] if part.named_child_count else None
                out.append(Binding(_text(ident, src), module, _line(part), reexport=True))
        if not any(p.type in ("export_clause", "namespace_export") for p in node.named_children):
            out.append(Binding("*", module, _line(node), "*", reexport=True))
        return out
    if is_default:
        if value is not None and value.type == "identifier":
            name = _text(value, src)
            out.append(Binding("default", "", _line(value), name, export=True))
        elif declaration is not None or value is not None:
            decl = declaration if declaration is not None else value
            name_node = decl.child_by_field_name("name") if decl is not None else None
            if name_node is not None:
                name = _text(name_node, src)
                out.append(Binding("default", "=" + name, _line(name_node), name, export=True))
        return out
    for part in node.named_children:
        if part.type == "export_clause":
            for spec in part.named_children:
                name = _text(spec.child_by_field_name("name"), src)
                alias = _text(spec.child_by_field_name("alias"), src) or name
                if name:  # export { raw } of an imported raw: a re-export, as export { raw } from
                    out.append(Binding(alias, "", _line(spec), name, export=True))
    return out


def _specifiers(part: Node, src: bytes, module: str, *, reexport: bool) -> list[Binding]:
    out = []
    for spec in part.named_children:
        name = _text(spec.child_by_field_name("name"), src)
        alias = _text(spec.child_by_field_name("alias"), src) or name
        if name:
            out.append(Binding(alias, _key([module, name]), _line(spec), name, reexport=reexport))
    return out


def _require(node: Node, src: bytes, path: str) -> list[Binding]:
    """``const x = require('./y')`` and ``const { a, b: c } = require('./y')`` (or
    ``= await import('./y')``, TypeScript's: a module's exports as ``import * as x``)."""
    value = node.child_by_field_name("value")
    if value is not None and value.type == "await_expression" and value.named_child_count:
        value = value.named_child(0)
    args = value.child_by_field_name("arguments") if value is not None else None
    first = args.named_children[0] if args is not None and args.named_child_count else None
    if first is None or first.type != "string":
        return []
    module = js_module(_text(first, src).strip("'\"`"), path)
    name = node.child_by_field_name("name")
    if name is None:
        return []
    if name.type == "identifier":
        return [Binding(_text(name, src), module, _line(name))]
    out = []
    if name.type == "object_pattern":
        for prop in name.named_children:
            if prop.type == "shorthand_property_identifier_pattern":
                n = _text(prop, src)
                out.append(Binding(n, _key([module, n]), _line(prop), n))
            elif prop.type == "pair_pattern":
                key = _text(prop.child_by_field_name("key"), src)
                val = prop.child_by_field_name("value")
                if val is not None and val.type == "identifier":
                    out.append(Binding(_text(val, src), _key([module, key]), _line(prop), key))
    return out


# -- Go -----------------------------------------------------------------------------

_GO_MAJOR = re.compile(r"^v\d+$")


def go(node: Node, src: bytes, path: str) -> list[Binding]:
    out = []
    for spec in _descendants(node, "import_spec"):
        ipath = _text(spec.child_by_field_name("path"), src).strip('"`')
        if not ipath:
            continue
        parts = ipath.split("/")
        last = parts[-2] if len(parts) > 1 and _GO_MAJOR.match(parts[-1]) else parts[-1]
        alias = _text(spec.child_by_field_name("name"), src)
        bound = {"": last, ".": "*", "_": ""}.get(alias, alias)
        out.append(Binding(bound, _key(split_key(ipath)), _line(spec)))
    return out


def _descendants(node: Node, kind: str, depth: int = 3) -> list[Node]:
    if node.type == kind:
        return [node]
    if depth == 0:
        return []
    return [d for c in node.named_children for d in _descendants(c, kind, depth - 1)]


# -- Rust -----------------------------------------------------------------------------


def rust(node: Node, src: bytes, path: str) -> list[Binding]:
    """A ``use`` declaration, or a ``mod x;`` declaring the module of another file
    (``x`` then names that module in this one: ``x::f()``)."""
    here = _rust_here(node, src, path)
    if node.type == "mod_item":
        name = _text(node.child_by_field_name("name"), src)
        if not name or node.child_by_field_name("body") is not None:
            return []
        return [Binding(name, _key([*here, name]), _line(node))]
    argument = node.child_by_field_name("argument")
    out: list[Binding] = []
    if argument is not None:
        _rust_use(argument, src, here, [], out)
        root = _text(argument, src).lstrip(":{ \t\n").split("::")[0].strip()
        if root not in ("crate", "self", "super"):
            out = [b._replace(foreign=True) for b in out]
    return out


def _rust_here(node: Node, src: bytes, path: str) -> list[str]:
    """The parts naming the module ``node`` stands in: its file's, then the inline
    ``mod`` items holding it (``mod tests { use super::*; }``: ``super`` is the file)."""
    inline = []
    up = node.parent
    while up is not None:
        if up.type == "mod_item":
            inline.append(_text(up.child_by_field_name("name"), src))
        up = up.parent
    return [*module_parts(path, "rust"), *reversed(inline)]


def rust_module_path(parts: list[str], here: list[str]) -> list[str]:
    """A Rust path's parts as a key's: a leading ``crate`` left out (a key is the
    end of a path), ``self`` and each ``super`` resolved against ``here``, the parts
    naming the module the path stands in."""
    out: list[str] | None = None  # None: no part read yet
    for part in parts:
        if out is None and part == "crate":
            out = []
        elif out is None and part == "self":
            out = list(here)
        elif part == "super":
            out = (list(here) if out is None else out)[:-1]
        else:
            out = [*(out or []), part]
    return out or []


def _rust_path(node: Node | None, src: bytes, here: list[str]) -> list[str]:
    if node is None:
        return []
    return rust_module_path([p for p in _text(node, src).replace(" ", "").split("::") if p], here)


def _rust_use(node: Node, src: bytes, here: list[str], prefix: list[str], out: list[Binding]) -> None:
    t = node.type
    if t in ("scoped_identifier", "identifier", "crate", "self", "super"):
        # (``self`` in a list is the module before it: ``use a::{self, b}``)
        parts = list(prefix) if t == "self" and prefix else prefix + _rust_path(node, src, here)
        if parts:
            name = parts[-1]
            out.append(Binding(name, _key(parts), _line(node), name, reexport=True))
    elif t == "use_as_clause":
        parts = prefix + _rust_path(node.child_by_field_name("path"), src, here)
        alias = _text(node.child_by_field_name("alias"), src)
        if parts:
            out.append(Binding(alias or parts[-1], _key(parts), _line(node), parts[-1], reexport=True))
    elif t == "scoped_use_list":
        inner = prefix + _rust_path(node.child_by_field_name("path"), src, here)
        lst = node.child_by_field_name("list")
        if lst is not None:
            for child in lst.named_children:
                _rust_use(child, src, here, inner, out)
    elif t == "use_list":
        for child in node.named_children:
            _rust_use(child, src, here, prefix, out)
    elif t == "use_wildcard":
        inner = prefix + _rust_path(node.named_children[0] if node.named_child_count else None, src, here)
        out.append(Binding("*", _key(inner), _line(node), "*", reexport=True))


# -- C, C++ ----------------------------------------------------------------------------

_C_EXTENSIONS = re.compile(r"\.(?:h|hh|hpp|hxx|h\+\+|inc|ipp|tpp|c|cc|cpp|cxx)$")


def c_include(node: Node, src: bytes, path: str) -> list[Binding]:
    """``#include "x/y.h"``, ``#include <x/y.h>``: a use of the header's module (a row
    named ``y``, no name bound: which header declares a name is the header's to say), keyed
    as spelled (the end of the header's path, wherever an include path finds it), or against
    the file's folder when it starts ``./`` or ``../``. A header and its source file share
    a key (``util.h``, ``util.cpp``: ``util``), as their module does."""
    spelled = _text(node.child_by_field_name("path"), src).strip().strip('"<>').strip()
    if not spelled:
        return []
    if spelled.startswith(("./", "../")):
        spelled = posixpath.normpath(posixpath.join(posixpath.dirname(path), spelled)).lstrip("./")
    parts = split_key(_C_EXTENSIONS.sub("", spelled))
    return [Binding("", _key(parts), _line(node), parts[-1])] if parts else []


# -- Java, Kotlin, Scala, Groovy, C#, PHP: dotted names -----------------------------


# What a dotted import statement opens with (Java's ``import static``; PHP's clause of
# ``use function``: ``function A\f``).
_IMPORT_HEAD = re.compile(r"^\s*(?:(?:import|using|use)\s+)?(?:(?:static|function|const)\s+)?")


def dotted(node: Node, src: bytes, path: str) -> list[Binding]:
    """``import a.b.C;``, ``import a.b.*``, ``import a.b.C as D`` (Kotlin),
    ``use A\\B\\C as D;``, ``use function A\\f;`` (PHP), ``using X = A.B;`` (C#: :func:`_using`):
    the last name is bound."""
    if node.type == "using_directive":
        return _using(node, src)
    raw = _text(node, src)
    body = _IMPORT_HEAD.sub("", raw).rstrip(";").strip()
    alias = ""
    m = re.match(r"^(\w+)\s*=\s*(.+)$", body)
    if m:
        alias, body = m.group(1), m.group(2)
    m = re.match(r"^(.+?)\s+as\s+(\w+)$", body)
    if m:
        body, alias = m.group(1), m.group(2)
    if body.endswith((".*", "._", "\\*")) or body.endswith("*"):
        return [Binding("*", _key(split_key(body.rstrip("*_").rstrip(".\\"))), _line(node), "*")]
    if "{" in body:  # Scala import a.b.{C, D => E}, PHP use A\{B, C}
        head, _, rest = body.partition("{")
        out = []
        for item in rest.rstrip("}").split(","):
            name, renamed = _split_selector(item)
            if name:
                parts = [*split_key(head.replace("\\", ".")), name]
                out.append(Binding(renamed or name, _key(parts), _line(node), name))
        return out
    parts = split_key(body.replace("\\", "."))
    if not parts:
        return []
    return [Binding(alias or parts[-1], _key(parts), _line(node), parts[-1])]


def _using(node: Node, src: bytes) -> list[Binding]:
    """C#'s ``using A.B;`` (``global`` too): every type of the namespace, as an import of
    ``A.B.*`` (a question tries a type's name in it); ``using X = A.B.C;``: ``X``; not
    ``using static A.B;`` (its members: not known from here)."""
    named = node.named_children
    if not named or any(c.type == "static" for c in node.children):
        return []
    parts = split_key(_text(named[-1], src))
    if not parts:
        return []
    alias = node.child_by_field_name("name")
    if alias is not None and alias != named[-1]:
        return [Binding(_text(alias, src), _key(parts), _line(node), parts[-1])]
    return [Binding("*", _key(parts), _line(node), "*")]


def _split_selector(item: str) -> tuple[str, str]:
    """``C``, ``D => E`` (Scala), ``B as C`` (PHP): the name and what it is renamed to."""
    pieces = re.split(r"=>|\bas\b", item.strip(), maxsplit=1)
    return pieces[0].strip(), (pieces[1].strip() if len(pieces) > 1 else "")
