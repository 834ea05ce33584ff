"""``repolens.record.Record`` makes what ``typing.NamedTuple`` makes, without compiling code."""

from __future__ import annotations

import pickle
from typing import NamedTuple

import pytest

from repolens.record import Record
from repolens.search.filters import Filters


def span_class(base: type) -> type:
    """The same class body on ``base`` (``typing.NamedTuple`` or ``Record``)."""

    class Span(base):  # type: ignore[misc,valid-type]
        """A span."""

        path: str
        start: int = 1
        end: int | None = None

        @property
        def label(self) -> str:
            return f"{self.path}:{self.start}"

    return Span


SpanNT, SpanRec = span_class(NamedTuple), span_class(Record)  # type: ignore[arg-type]


def outcomes(cls: type) -> list[object]:
    """What each use of ``cls`` gives (a value, or the type of the error it raises)."""
    calls = [
        lambda: cls("a.py"),
        lambda: cls("a.py", 3, end=9),
        lambda: cls(path="b.py", end=2),
        lambda: cls._make(["c.py", 4, 5]),
        lambda: cls("a.py", 2)._replace(end=7),
        lambda: cls("a.py")._asdict(),
        lambda: cls("a.py", 5).label,
        lambda: (cls._fields, cls._field_defaults, cls.__match_args__, cls.__doc__),
        lambda: cls(),
        lambda: cls("a", 1, 2, 3),
        lambda: cls("a", path="b"),
        lambda: cls("a", line=2),
        lambda: cls._make(["a"]),
        lambda: cls("a")._replace(line=2),
        lambda: setattr(cls("a"), "path", "b"),
    ]
    out: list[object] = []
    for call in calls:
        try:
            value = call()
        except Exception as exc:  # the type is the outcome compared
            out.append(type(exc))
        else:
            out.append(repr(value))
    return out


def test_a_record_behaves_as_a_named_tuple():
    assert outcomes(SpanRec) == outcomes(SpanNT)
    rec, nt = SpanRec("a.py", 2, 3), SpanNT("a.py", 2, 3)
    assert rec == nt == ("a.py", 2, 3) and hash(rec) == hash(nt)
    assert isinstance(rec, tuple) and type(SpanRec) is type
    match rec:
        case SpanRec(path, start, end):
            assert (path, start, end) == ("a.py", 2, 3)


def test_a_record_pickles_by_reference():
    filters = Filters(subpath="src", kinds=("function",))
    assert pickle.loads(pickle.dumps(filters)) == filters
    assert type(pickle.loads(pickle.dumps(filters))) is Filters


def test_a_record_refuses_what_a_named_tuple_refuses():
    with pytest.raises(TypeError, match="without a default follows"):

        class Bad(Record):
            a: int = 1
            b: int

    with pytest.raises(AttributeError, match="cannot overwrite"):

        class Worse(Record):
            a: int

            def _asdict(self) -> dict:
                return {}
