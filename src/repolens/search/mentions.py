"""Files a query mentions: traceback paths, file names, dotted modules, commit scopes.

Issue texts carry tracebacks (``.../site-packages/sympy/matrices/dense.py``),
file names (``walk.rs``) and dotted module paths (``astropy.units.quantity``);
commit subjects carry scopes (``fix(validator):``). Each is matched against
the indexed paths by trailing components, so absolute prefixes from another
machine do not matter:

- two or more trailing components match (``matrices/dense.py``,
  ``sphinx.ext.autodoc`` -> ``sphinx/ext/autodoc/__init__.py``): strength 1;
- a bare file name with its extension (``walk.rs``): strength 0.6, shared
  among the files of that name;
- a scope names a folder or file stem anywhere in the path: strength 0.4,
  shared among the files it names.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath

from repolens.chunking.languages import EXTENSIONS

# Extensions that make the last dotted part a file extension rather than a
# module name (``conf.py`` vs ``np.array``).
FILE_EXTENSIONS = frozenset(e.lstrip(".").lower() for e in EXTENSIONS) | frozenset(
    {"cfg", "ini", "lock", "txt", "csv", "tsv", "env", "in", "mk"}
)
_INIT_STEMS = ("__init__", "index", "mod", "lib", "main")
MAX_SUFFIX = 3


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


class PathIndex:
    """Indexed paths by trailing components (lowercase, extension dropped)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.size = 0  # paths held
        self.by_suffix: dict[tuple[str, ...], list[str]] = {}
        self.by_name: dict[str, list[str]] = {}
        self.by_part: dict[str, list[str]] = {}
        for path in paths:
            parts = [p.lower() for p in PurePosixPath(path).parts]
            if not parts:
                continue
            self.size += 1
            self.by_name.setdefault(parts[-1], []).append(path)
            comps = [*parts[:-1], _stem(parts[-1])]
            keys = [comps]
            if comps[-1] in _INIT_STEMS and len(comps) > 1:
                keys.append(comps[:-1])  # a package named by its folder
            for key in keys:
                for k in range(2, min(MAX_SUFFIX, len(key)) + 1):
                    self.by_suffix.setdefault(tuple(key[-k:]), []).append(path)
            for part in dict.fromkeys(comps):
                self.by_part.setdefault(part, []).append(path)

    def match(self, mentions: Sequence[str], scopes: Sequence[str] = ()) -> dict[str, float]:
        """Indexed paths the mentions point at, with a strength in (0, 1]."""
        found: dict[str, float] = {}

        def add(paths: list[str], strength: float) -> None:
            for p in paths:
                found[p] = max(found.get(p, 0.0), strength)

        for mention in mentions:
            comps = _components(mention)
            if comps is None:
                continue
            parts, has_ext = comps
            hit = False
            for k in range(min(MAX_SUFFIX, len(parts)), 1, -1):
                paths = self.by_suffix.get(tuple(parts[-k:]))
                if paths:
                    add(paths, 1.0)
                    hit = True
                    break
            if not hit and has_ext and len(parts) >= 1:
                name = mention.replace("\\", "/").rsplit("/", 1)[-1].lower()
                paths = self.by_name.get(name, [])
                if paths:
                    add(paths, 0.6 / math.sqrt(len(paths)))
        for scope in scopes:
            for word in scope.replace("/", " ").split():
                paths = self.by_part.get(word.lower(), [])
                if paths:
                    add(paths, 0.4 / math.sqrt(len(paths)))
        return found


def _components(mention: str) -> tuple[list[str], bool] | None:
    """(lowercase components with the extension dropped, had an extension)."""
    text = mention.replace("\\", "/").strip("/")
    if "/" in text:
        parts = [p for p in text.lower().split("/") if p and p != "."]
        if not parts:
            return None
        last = parts[-1]
        has_ext = "." in last and last.rsplit(".", 1)[1] in FILE_EXTENSIONS
        parts[-1] = _stem(last) if has_ext else last
        return parts, has_ext
    pieces = text.lower().split(".")
    if len(pieces) < 2:
        return None
    if pieces[-1] in FILE_EXTENSIONS:
        return [".".join(pieces[:-1])], True  # a file name: walk.rs, conf.py
    return pieces, False  # a dotted module path: sphinx.ext.autodoc


# The paths the cached indexes may hold together (~1.2 KB each): every
# repository of a server serving a few hundred (bench.org scale's 309
# indexes hold 178,000 paths). A bound on the count of indexes (it was 9)
# rebuilt them on every question that mentions a path once a server's
# searches, or one search across repositories, went round more of them.
MAX_CACHED_PATHS = 250_000
_CACHE: OrderedDict[str, PathIndex] = OrderedDict()
_LOCK = threading.Lock()


def path_index(key: str, load: Callable[[], Iterable[str]]) -> PathIndex:
    """The path index of one generation, built once (``key`` names it; the
    set of files of a generation only changes with a new ``key``); the
    least recently used go first when the cache holds too many paths. Built
    outside the lock: the threads of a search across repositories build
    their repositories' at once (two may build the same one: the first kept)."""
    with _LOCK:
        index = _CACHE.get(key)
        if index is not None:
            _CACHE.move_to_end(key)
            return index
    index = PathIndex(load())
    with _LOCK:
        index = _CACHE.setdefault(key, index)
        _CACHE.move_to_end(key)
        held = sum(i.size for i in _CACHE.values())
        while held > MAX_CACHED_PATHS and len(_CACHE) > 1:
            held -= _CACHE.popitem(last=False)[1].size
        return index
