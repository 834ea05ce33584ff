"""``Record``: ``typing.NamedTuple`` classes made without compiling code.

``class Span(Record)`` with annotated fields (and defaults, methods,
properties, a docstring) makes what ``class Span(NamedTuple)`` makes: a
tuple subclass with the fields as attributes, ``_fields``,
``_field_defaults``, ``_make``, ``_replace``, ``_asdict``, the same
``repr`` and equality, pickled by reference.

Why not ``typing.NamedTuple``: it compiles code for every class it makes
(each postponed annotation into a ``ForwardRef``, then
``collections.namedtuple``'s ``__new__`` from source), ~1M instructions for
a class of five fields, and a search in a new process made 35 of them,
about a tenth of what it cost above the interpreter's own start
(docs/benchmarks.md, "CLI start-up"). Here ``__new__`` is one function for
every record (positional arguments as given; keywords and defaults bound in
Python, the rarer call) and a class costs about what any class costs.
Annotations are never evaluated: they stay what the module wrote (strings
under ``from __future__ import annotations``), for readers and type
checkers, which see ``typing.NamedTuple`` itself.
"""

from __future__ import annotations

try:  # the C descriptor collections.namedtuple uses for its fields
    from _collections import _tuplegetter
except ImportError:  # pragma: no cover - another Python implementation
    from operator import itemgetter

    def _tuplegetter(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)


_tuple_new = tuple.__new__
# What a record's class body may not define: what the record makes itself
# (as ``typing.NamedTuple`` refuses them).
_MADE = frozenset(
    {
        "__new__",
        "__init__",
        "__slots__",
        "__getnewargs__",
        "_fields",
        "_field_defaults",
        "_make",
        "_replace",
        "_asdict",
    }
)
# What ``type`` puts in any class body; not copied as a user attribute.
_CLASS_KEYS = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__", "__classcell__"})


def _new(cls: type, *args: Any, **kwargs: Any) -> Any:
    if kwargs or len(args) != len(cls._fields):  # type: ignore[attr-defined]
        args = _bind(cls, args, kwargs)
    return _tuple_new(cls, args)


def _bind(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The values of a call by keyword or with defaults, in field order; the
    ``TypeError`` a function of those parameters would raise."""
    fields, defaults = cls._fields, cls._field_defaults
    if len(args) > len(fields):
        raise TypeError(
            f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given"
        )
    for name in fields[: len(args)]:
        if name in kwargs:
            raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
    values = list(args)
    missing = []
    for name in fields[len(args) :]:
        if name in kwargs:
            values.append(kwargs.pop(name))
        elif name in defaults:
            values.append(defaults[name])
        else:
            missing.append(name)
    if missing:
        raise TypeError(f"{cls.__name__}() missing required argument(s): {', '.join(map(repr, missing))}")
    if kwargs:
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    return tuple(values)


def _make(cls: Any, iterable: Any) -> Any:
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self: Any, /, **changes: Any) -> Any:
    result = self._make(map(changes.pop, self._fields, self))
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return result


def _asdict(self: Any) -> dict[str, Any]:
    return dict(zip(self._fields, self, strict=True))


def _repr(self: Any) -> str:
    inner = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
    return f"{type(self).__name__}({inner})"


def _getnewargs(self: Any) -> tuple[Any, ...]:
    return tuple(self)


class _RecordMeta(type):
    """Makes each ``class X(Record)`` a plain tuple subclass (whose own type
    is ``type``, so making its instances pays for no metaclass)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not ns.get("_record_root"):
            return record_class(name, ns)
        return super().__new__(mcls, name, bases, ns)


def record_class(name: str, ns: dict[str, Any]) -> type:
    """The record class ``name`` whose class body was ``ns``."""
    fields = tuple(ns.get("__annotations__", {}))
    defaults = {f: ns[f] for f in fields if f in ns}
    if defaults and any(f not in defaults for f in fields[fields.index(next(iter(defaults))) :]):
        raise TypeError(f"{name}: a field without a default follows one with a default")
    if bad := _MADE.intersection(ns):
        raise AttributeError(f"{name}: cannot overwrite record attribute {sorted(bad)[0]}")
    body: dict[str, Any] = {
        "__slots__": (),
        "__doc__": f"{name}({', '.join(fields)})",
        "_fields": fields,
        "_field_defaults": defaults,
        "__match_args__": fields,
        "__new__": _new,
        "_make": classmethod(_make),
        "_replace": _replace,
        "_asdict": _asdict,
        "__repr__": _repr,
        "__getnewargs__": _getnewargs,
    }
    for i, field in enumerate(fields):
        body[field] = _tuplegetter(i, f"Alias for field number {i}")
    for key, value in ns.items():
        if key in _CLASS_KEYS or (key not in defaults and not (key == "__doc__" and value is None)):
            body[key] = value
    return type(name, (tuple,), body)


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as Record
else:

    class Record(metaclass=_RecordMeta):
        """Subclass it as ``typing.NamedTuple`` (see the module docstring)."""

        _record_root = True
