"""Syntax-aware chunks: one chunk per definition, found with tree-sitter.

The tree is walked only where definitions live: the file's top level, the
bodies of classes / namespaces / impls (and transparent wrappers such as
``#ifdef`` or ``export``), never inside functions. Each definition becomes a
:class:`~repolens.chunking.pack.Def` whose range starts at its first decorator
or leading doc comment; :class:`~repolens.chunking.pack.Packer` turns the
definitions into chunks that tile the file.

Failure modes, none of which raises:

* no grammar for the language, or a file over ``max_bytes``: line windows;
* the parser gives up (its progress callback passes ``timeout`` seconds):
  line windows, ``parse_error=True``;
* ERROR nodes cover more than ``ERROR_FRACTION`` of the lines: line windows,
  ``parse_error=True``. Smaller errors only turn their lines into block
  chunks. A ``.h`` file with errors as C is re-parsed as C++.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import tree_sitter as ts
from tree_sitter import Node

from repolens.chunking import Symbol
from repolens.chunking.chunker import ChunkedFile
from repolens.chunking.grammars import (
    CLASS_KINDS,
    CONTAINER_KINDS,
    Found,
    LangSpec,
    Scope,
    classify,
    load_language,
    parser_for,
    qualify,
    spec_for,
)
from repolens.chunking.nested import nested_symbols
from repolens.chunking.pack import Def, Packer
from repolens.chunking.refs import RefRows
from repolens.chunking.refs.extract import extract_refs
from repolens.chunking.text import MAX_LINES, window_chunks
from repolens.lines import source_lines

MAX_PARSE_BYTES = 2_000_000
PARSE_TIMEOUT_S = 5.0
ERROR_FRACTION = 0.5
# Where a top-level statement may start (see SyntaxChunker._salvage): a line
# whose first column holds a name, a decorator or a keyword.
_TOP_LEVEL_START = re.compile(rb"\n(?=[A-Za-z_$@])")
# An indented line starting with ``<`` or ``(``: its indentation's last space (see _mended).
_MEMBER_LINE = re.compile(rb"(\n[ \t]*)[ \t](?=[<(])")
MAX_DEPTH = 8
MAX_DOC_CHARS = 600
MAX_SIGNATURE_CHARS = 240
_READ_SIZE = 1 << 16


@dataclass(frozen=True)
class SyntaxChunker:
    """Chunker for languages with a tree-sitter grammar (see ``grammars.SPECS``)."""

    max_bytes: int = MAX_PARSE_BYTES
    timeout: float = PARSE_TIMEOUT_S
    # Definitions of at most this many lines are packed with their
    # neighbours (up to the chunk target) instead of standing alone.
    merge_max_lines: int = 2
    name: str = "syntax"
    version: int = 1

    def chunk(self, path: str, text: str, language: str) -> ChunkedFile:
        lines = source_lines(text)
        spec = spec_for(language, path)
        if not lines or spec is None:
            return _windows(path, text, language, lines, parse_error=False)
        src = text.encode("utf-8", "surrogatepass")
        if len(src) > self.max_bytes:
            return _windows(path, text, language, lines, parse_error=False)
        tree = self._parse(spec, src)
        if tree is None:
            return _windows(path, text, language, lines, parse_error=True)
        partial = False
        if tree.root_node.has_error:
            frac = _error_fraction(tree, len(lines))
            if language == "c" and path.endswith(".h") and frac > 0:
                cpp = spec_for("cpp", path)
                cpp_tree = self._parse(cpp, src) if cpp is not None else None
                if cpp is not None and cpp_tree is not None:
                    cpp_frac = _error_fraction(cpp_tree, len(lines)) if cpp_tree.root_node.has_error else 0.0
                    if cpp_frac < frac:
                        spec, tree, frac = cpp, cpp_tree, cpp_frac
            if frac <= ERROR_FRACTION and spec.name in ("typescript", "tsx"):
                mended = self._salvage(spec, src, len(lines))  # TypeScript's members one per line
                if mended is not None and not mended[2]:
                    tree, src, _ = mended
                    frac = 0.0
            if frac > ERROR_FRACTION:
                salvaged = self._salvage(spec, src, len(lines))
                if salvaged is None:
                    return _windows(path, text, language, lines, parse_error=True)
                tree, src, partial = salvaged
        walker = _Walker(spec, src, len(lines))
        defs: list[Def] = []
        walker.collect(tree.root_node.named_children, Scope("", "", src, spec), 0, defs)
        packer = Packer(
            path,
            language,
            lines,
            gap_breaks=walker.breaks,
            breaks_for=walker.breaks_for,
            merge_max_lines=self.merge_max_lines,
        )
        chunks = packer.pack(defs)
        symbols = symbols_of(defs, path, language)
        refs = _refs(tree, src, spec, path, symbols, len(lines), functools.partial(_byte_spans, defs))
        nested = nested_symbols(tree, src, spec, defs, path, language, walker.header)
        return ChunkedFile(chunks, symbols + nested if nested else symbols, parse_error=partial, refs=refs)

    def _salvage(self, spec: LangSpec, src: bytes, nlines: int) -> tuple[ts.Tree, bytes, bool] | None:
        """A tree of the file without its top-level statements that fail to
        parse, or None. A grammar can lose a whole file to one construct it
        does not know (tree-sitter-typescript and a call signature after a
        comment in an interface: one ERROR from the first line to the last),
        though each statement around it parses alone. The file is cut where
        a line starts at its first column with a name or a decorator; a part
        that fails alone is blanked (spaces, its newlines kept, so every
        other part keeps its lines and bytes), and the rest parsed again.
        The blanked lines fall in the gaps between definitions, chunked as
        blocks of their own text, no worse than the line windows the whole
        file would be otherwise. A TypeScript part is mended instead where
        :meth:`_mended` can. Also returns whether a part was blanked."""
        starts = [0, *(m.start() + 1 for m in _TOP_LEVEL_START.finditer(src)), len(src)]
        blanked = bytearray(src)
        bad = 0
        fixed = False  # a part mended (see _mended), not blanked
        for a, b in itertools.pairwise(sorted(set(starts))):
            part = self._parse(spec, src[a:b])
            if part is None or part.root_node.has_error:
                mended = self._mended(spec, src[a:b])
                if mended is not None:
                    blanked[a:b] = mended
                    fixed = True
                    continue
                blanked[a:b] = re.sub(rb"[^\n]", b" ", src[a:b])
                bad += b - a
        if (bad == 0 and not fixed) or bad == len(src):
            return None
        out = bytes(blanked)
        tree = self._parse(spec, out)
        if tree is None or _error_fraction(tree, nlines) > ERROR_FRACTION:
            return None
        return tree, out, bad > 0

    def _mended(self, spec: LangSpec, part: bytes) -> bytes | None:
        """A TypeScript statement that fails to parse, its members separated: a
        line starting with ``<`` or ``(`` after another member (an interface's
        call signatures, overloads one per line) is read by tree-sitter as
        that member's type called (``X\n<P>(h: H)``: ``X<P>(h: H)``), where
        TypeScript starts a new member. ``;`` in place of the last space of
        such a line's indentation (bytes and lines kept) separates them; the
        part mended so when it then parses, else None."""
        if spec.name not in ("typescript", "tsx"):
            return None
        mended = _MEMBER_LINE.sub(rb"\1;", part)
        if mended == part:
            return None
        tree = self._parse(spec, mended)
        return mended if tree is not None and not tree.root_node.has_error else None

    def _parse(self, spec: LangSpec, src: bytes) -> ts.Tree | None:
        parser = parser_for(spec)
        if parser is None:
            return None
        deadline = time.monotonic() + self.timeout

        def read(offset: int, _point: object) -> bytes:
            return src[offset : offset + _READ_SIZE]

        def progress(_offset: int, _has_error: bool) -> bool:
            return time.monotonic() > deadline

        try:
            # The progress callback only runs when the source comes from a
            # callable; returning True cancels the parse (raises ValueError).
            return parser.parse(read, progress_callback=progress)
        except ValueError:
            parser.reset()
            return None


def supports(language: str) -> bool:
    """True if ``language`` has a spec and its grammar wheel loads."""
    spec = spec_for(language)
    return spec is not None and load_language(spec.module, spec.entry) is not None


def symbols_of(defs: list[Def], path: str, language: str) -> list[Symbol]:
    out: list[Symbol] = []
    stack = list(reversed(defs))
    while stack:
        d = stack.pop()
        if d.members:
            for name, qual, kind, s, e in d.members:
                out.append(Symbol(name, qual, kind, path, s + 1, e + 1, d.signature, d.parent, language))
        else:
            out.append(
                Symbol(
                    d.name, d.qualname, d.kind, path, d.start + 1, d.end + 1, d.signature, d.parent, language
                )
            )
        stack.extend(reversed(d.children))
    return out


def _byte_spans(defs: list[Def]) -> list[tuple[int, int]]:
    """The bytes of each definition's node, in the order of :func:`symbols_of`'s symbols (a
    member declared with others, Go's ``const (...)``: its declaration's), for the references'
    definition of a use on a line that several share."""
    out: list[tuple[int, int]] = []
    stack = list(reversed(defs))
    while stack:
        d = stack.pop()
        node = d.ref[0] if isinstance(d.ref, tuple) else None
        span = (node.start_byte, node.end_byte) if node is not None else (0, 0)
        out.extend([span] * (len(d.members) or 1))
        stack.extend(reversed(d.children))
    return out


def _refs(
    tree: ts.Tree,
    src: bytes,
    spec: LangSpec,
    path: str,
    symbols: list[Symbol],
    nlines: int,
    spans: Callable[[], list[tuple[int, int]]],
) -> RefRows | None:
    """The file's references; none when their extraction fails (its chunks are kept all the same)."""
    try:
        return extract_refs(tree, src, spec, path, symbols, nlines, spans)
    except Exception:  # a reference spec failing on one file must cost its references only
        return None


def _windows(path: str, text: str, language: str, lines: list[str], *, parse_error: bool) -> ChunkedFile:
    return ChunkedFile(window_chunks(path, text, language, lines=lines), parse_error=parse_error)


@functools.cache
def _error_query(language: ts.Language) -> ts.Query:
    return ts.Query(language, "(ERROR) @e")


def _error_fraction(tree: ts.Tree, nlines: int) -> float:
    """Share of the file's lines inside ERROR nodes (MISSING nodes cover none)."""
    caps = ts.QueryCursor(_error_query(tree.language)).captures(tree.root_node)
    spans = sorted((n.start_point[0], _end_row(n)) for n in caps.get("e", ()))
    covered, cur_s, cur_e = 0, -1, -2
    for s, e in spans:
        if s > cur_e + 1:
            covered += cur_e - cur_s + 1 if cur_e >= cur_s >= 0 else 0
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    covered += cur_e - cur_s + 1 if cur_e >= cur_s >= 0 else 0
    return covered / max(nlines, 1)


def _end_row(node: Node) -> int:
    """Last row holding the node's text (a node ending at column 0 ends on the row before)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


class _Walker:
    """Collects definitions from the levels of a tree where they live."""

    def __init__(self, spec: LangSpec, src: bytes, nrows: int) -> None:
        self.spec = spec
        self.src = src
        self.last_row = nrows - 1
        self.breaks: list[int] = []  # rows where a statement or declaration starts
        test = spec.attachment_test
        attachments = spec.attachments
        self.is_attachment = (
            (lambda n: n.type in attachments and test(n, src)) if test else (lambda n: n.type in attachments)
        )

    def collect(
        self,
        nodes: list[Node],
        scope: Scope,
        depth: int,
        out: list[Def],
        carry: tuple[list[Node], int] | None = None,
    ) -> tuple[list[Node], int]:
        """Append the definitions among ``nodes`` (siblings) to ``out``.

        ``carry`` and the return value are the doc comments / decorators
        still waiting for a definition, so that a comment at the end of a
        transparent node (Haskell ``imports``) reaches the definition after it.
        """
        spec = self.spec
        base = scope
        pending, pending_end = carry if carry is not None else ([], -2)
        prev_end = -1
        for node in nodes:
            t = node.type
            srow = node.start_point[0]
            erow = _end_row(node)
            self.breaks.append(srow)
            if t in spec.transparent:
                f = spec.transparent[t]
                inner = node.child_by_field_name(f) if f else node
                # its field a definition itself (``extern "C" int f(int);``): that one, not its parts
                held = [inner] if inner is not None and inner is not node and inner.type in spec.defs else []
                pending, pending_end = (
                    self.collect(held or inner.named_children, scope, depth + 1, out, (pending, pending_end))
                    if inner is not None and depth < MAX_DEPTH
                    else ([], -2)
                )
                prev_end = erow
                continue
            prefix = spec.prefixes.get(t)
            if prefix is not None:
                found = prefix(node, base)
                if found is not None:
                    qual = qualify(base.qualname, found.name, spec.sep) if found.name else base.qualname
                    scope = Scope(qual, base.kind, self.src, spec)
                    pending, prev_end = [], erow
                    continue
            if self.is_attachment(node):
                if srow > prev_end:  # a comment trailing code on its line is not the next one's doc
                    if pending and srow > pending_end + 1:
                        pending = []
                    pending.append(node)
                    pending_end = erow
                else:
                    pending = []
                prev_end = erow
                continue
            inner = node
            for _ in range(3):
                w = spec.wrappers.get(inner.type)
                if w is None:
                    break
                nxt = (
                    inner.child_by_field_name(w)
                    if w
                    else (inner.named_children[-1] if inner.named_child_count else None)
                )
                if nxt is None:
                    break
                inner = nxt
            found = classify(inner, scope)
            if found is None:
                pending, prev_end = [], erow
                continue
            if not found.kind:  # transparent: its members belong to this level
                if found.body is not None and depth < MAX_DEPTH:
                    self.collect(found.body.named_children, scope, depth + 1, out)
                pending, prev_end = [], erow
                continue
            attached = pending if pending and pending_end >= srow - 1 else []
            d = self._make_def(node, inner, found, attached, scope)
            pending, prev_end = [], d.end
            if (
                spec.merge_clauses
                and out
                and out[-1].qualname == d.qualname
                and out[-1].kind == d.kind
                and out[-1].end < d.start
            ):
                out[-1].end = d.end  # another clause of the same function
                continue
            if found.body is not None and d.kind in CONTAINER_KINDS and depth < MAX_DEPTH:
                child_scope = Scope(found.child_prefix or d.qualname, d.kind, self.src, spec)
                self.collect(found.body.named_children, child_scope, depth + 1, d.children)
            out.append(d)
        return pending, pending_end

    def _make_def(self, node: Node, inner: Node, found: Found, attached: list[Node], scope: Scope) -> Def:
        spec = self.spec
        start = attached[0].start_point[0] if attached else node.start_point[0]
        end = _end_row(node)
        if found.end_node is not None:
            end = max(end, _end_row(found.end_node))
        end = min(end, self.last_row)
        kind = found.kind
        if kind == "function" and scope.kind in CLASS_KINDS:
            kind = "method"
        qual = found.qualname if found.qualname is not None else qualify(scope.qualname, found.name, spec.sep)
        parent = found.parent if found.parent is not None else scope.qualname
        body = (
            found.body
            if found.body is not None and found.body is not inner
            else inner.child_by_field_name("body")
        )
        anchor = found.name_node if found.name_node is not None else inner
        d = Def(kind, found.name, qual, parent, start, end, ref=(inner, body))
        d.signature, d.head, d.head_end = self._signature(anchor, body)
        d.doc = found.doc or self._doc(body, attached)
        if found.members:
            d.members = [
                (name, qualify(scope.qualname, name, spec.sep), k, n.start_point[0], _end_row(n))
                for name, k, n in found.members
            ]
        return d

    def header(self, node: Node) -> str:
        """A definition's header on one line, as :meth:`_signature` writes it."""
        return self._signature(node, node.child_by_field_name("body"))[0]

    def _signature(self, anchor: Node, body: Node | None) -> tuple[str, int, int]:
        """The header text up to the body on one line, and its rows."""
        src = self.src
        head = anchor.start_point[0]
        line_start = anchor.start_byte - anchor.start_point[1]
        if body is not None and body.start_byte > anchor.start_byte:
            stop = body.start_byte
            brow, bcol = body.start_point
            head_end = brow
            if brow > head and not src[body.start_byte - bcol : body.start_byte].strip():
                head_end = brow - 1
        else:
            stop = src.find(b"\n", anchor.start_byte)
            stop = len(src) if stop < 0 else stop
            head_end = head
        raw = src[line_start : min(stop, line_start + 2000)].decode("utf-8", "replace")
        if "\n" in raw:  # drop comment lines between a multi-line header's parts
            raw = "\n".join(x for x in raw.split("\n") if not x.lstrip().startswith(("#", "//", "/*", "--")))
        sig = " ".join(raw.split())
        sig = sig.rstrip("{:=(").rstrip()
        if sig.endswith((" do", " where")):
            sig = sig.rsplit(" ", 1)[0]
        return sig[:MAX_SIGNATURE_CHARS], head, min(max(head_end, head), self.last_row)

    def _doc(self, body: Node | None, attached: list[Node]) -> str:
        spec = self.spec
        if spec.docstring and body is not None and body.named_child_count:
            first = body.named_children[0]
            if first.type == "expression_statement" and first.named_child_count == 1:
                s = first.named_children[0]
                if s.type == "string":
                    return _clean_docstring(self.src[s.start_byte : s.end_byte].decode("utf-8", "replace"))
        parts = []
        for n in attached:
            if n.type in spec.comments or self.src[n.start_byte : n.start_byte + 4] == b"@doc":
                parts.append(self.src[n.start_byte : n.end_byte].decode("utf-8", "replace"))
        return _clean_comment("\n".join(parts)) if parts else ""

    def breaks_for(self, d: Def) -> list[int]:
        """Rows where a part of the big definition ``d`` may start: its statements."""
        ref = d.ref
        if not isinstance(ref, tuple):
            return []
        inner, body = ref
        rows: list[int] = []
        _statement_rows(body if body is not None else inner, rows, 0)
        return sorted(set(rows))


def _statement_rows(node: Node, rows: list[int], depth: int) -> None:
    children = node.named_children
    if len(children) == 1 and depth < 4:  # a wrapper such as Go's statement_list
        _statement_rows(children[0], rows, depth + 1)
        return
    for c in children:
        rows.append(c.start_point[0])
        if depth < 3 and c.end_point[0] - c.start_point[0] > MAX_LINES // 2:
            _statement_rows(c, rows, depth + 1)


_STRING_QUOTES = re.compile(r"^[rRuUbBfF]*(\"\"\"|'''|\"|')(.*)\1$", re.S)
_COMMENT_LEAD = re.compile(
    r"^\s*(?:/\*+!?|\*+/|//[/!]?|\*|#+'?|--+\s*\|?|;+|\(\*+|\*+\)|\"\"\"|\"|=\w+\b|@doc\b\s*(?:\"\"\"|\")?)\s?"
)
_COMMENT_TAIL = re.compile(r"\s*(?:\*+/|\*+\)|\"\"\"|\")\s*$")


def _clean_docstring(raw: str) -> str:
    m = _STRING_QUOTES.match(raw.strip())
    body = m.group(2) if m else raw
    return inspect.cleandoc(body)[:MAX_DOC_CHARS]


def _clean_comment(raw: str) -> str:
    out = []
    for line in raw.splitlines():
        line = _COMMENT_TAIL.sub("", _COMMENT_LEAD.sub("", line, count=1))
        out.append(line.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return inspect.cleandoc("\n".join(out))[:MAX_DOC_CHARS]
