"""How a member's receiver is read back from the text before its name.

A use's receiver (``a.b`` of ``a.b.f``) is the chain of names before it,
read backwards from the name: a regular expression over the file's bytes
reversed, anchored where the name starts, costs the length of the
receiver, where a search for it at the end of the text would cost that
text's length each time. A language says which separators join a member
to its receiver (``->`` is none in Java's lambdas or Python's return
annotations, ``.`` joins PHP's strings) and whether its chains break
their lines before a dot only (Python: a comment's last word and period
are no receiver of the next line's ``name.x``).
"""

from __future__ import annotations

import re

from repolens.chunking.refs.extracting import RefSpec

# How far back a receiver is looked for.
RECEIVER_BYTES = 160
# Separators between a receiver's names, reversed: ?. . -> ::
_DOT, _ARROW, _COLONS = (rb"\.\?", rb"\."), rb">-", rb"::"
# A reversed receiver's head (``a`` of ``a?.b``), reversed.
HEAD_REVERSED = re.compile(rb"[\w$]+\Z")
# Between a receiver's names, in the text as written.
CHAIN_SEP = re.compile(r"\s*(?:\?\.|\.|->|::)\s*")
# Inside a node's own text (Perl's ``Foo::Bar::g``): the last name.
LAST_NAME = re.compile(r"([^\W\d][\w$]*[!?]?|\$[\w$]+)\s*$")


def _reversed_receiver(
    separators: tuple[bytes, ...], leading: bool, private: bool, qualified: bool
) -> re.Pattern[bytes]:
    """The separator before the name (or ``:``, ``\\``), then the receiver:
    names joined by ``separators``, each perhaps a call's ``f()``;
    ``leading``: a chain's lines break before a separator, never after;
    ``private``: a name may start with ``#`` (``this.#x.name``: the private
    field's member). Elsewhere a name right after ``#`` is none (not one of a
    local ``x``). ``qualified``: a receiver right after ``\\`` is none
    (``\\App\\Item::make()``: not the ``Item`` a plain name means)."""
    seps = b"|".join(separators)
    gap = rb"[ \t]*" if leading else rb"\s*"
    name = rb"(?:\)\()?[\w$]+" + (rb"#?" if private else b"")
    chain = name + rb"(?:" + gap + rb"(?:" + seps + rb")\s*" + name + rb")*"
    after = rb"(?![#\\])" if qualified else rb"(?!#)"
    return re.compile(
        gap + rb"(?:" + seps + rb"|:|\\)\s*((?>" + chain + rb"))" + after
    )  # (atomic: all of it)


def reader(rs: RefSpec) -> tuple[re.Pattern[bytes], frozenset[int]]:
    """The language's receiver expression, and the bytes that may end a
    separator before a member's name (a name after none of them has no receiver)."""
    separators = (*(_DOT if rs.dot_members else ()), *((_ARROW,) if rs.arrow_members else ()))
    ends = b":\\" + (b"." if rs.dot_members else b"") + (b">" if rs.arrow_members else b"")
    receiver = _reversed_receiver(
        (*separators, _COLONS), rs.dots_lead_lines, rs.private_members, rs.namespace_classes
    )
    return receiver, frozenset(ends)
