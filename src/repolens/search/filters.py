"""Search filters: where a hit may come from (folder, language, kind, globs)."""

from __future__ import annotations

from collections.abc import Sequence

from repolens.chunking import Chunk
from repolens.chunking.labels import repeated_header_lines
from repolens.errors import PathError
from repolens.record import Record
from repolens.store.base import IndexReader, LexFilters
from repolens.validate import (
    check_globs,
    check_keywords,
    check_kind,
    check_language,
    check_min_score,
    check_subpath,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os

    from pathspec import GitIgnoreSpec


class Filters(Record):
    """Every search filter. ``subpath``, languages and kinds run inside the
    lexical query; globs are matched on paths afterwards (gitignore syntax),
    ``keywords`` on a chunk's own lines (each exactly, case-sensitive: the
    lines a hit cites, without the header a part of a split definition
    repeats). ``min_score`` drops the ranked hits that score below it."""

    subpath: str | None = None
    languages: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    min_score: float | None = None

    def lexical(self) -> LexFilters:
        return LexFilters(self.subpath, self.languages, self.kinds)

    def has_globs(self) -> bool:
        return bool(self.include or self.exclude)

    def accepts(self, chunk: Chunk) -> bool:
        if self.subpath and not (chunk.path == self.subpath or chunk.path.startswith(self.subpath + "/")):
            return False
        if self.languages and chunk.language not in self.languages:
            return False
        if self.kinds and chunk.kind not in self.kinds and not set(chunk.kinds) & set(self.kinds):
            return False
        if self.include and not _spec(self.include).match_file(chunk.path):
            return False
        if self.exclude and _spec(self.exclude).match_file(chunk.path):
            return False
        return not self.keywords or _contains(chunk, self.keywords)


def _contains(chunk: Chunk, keywords: tuple[str, ...]) -> bool:
    """Whether every keyword is in ``chunk``'s own lines."""
    text = chunk.text
    if header := repeated_header_lines(chunk):
        text = text.split("\n", header)[-1]
    return all(k in text for k in keywords)


def make_filters(
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    keyword: str | Sequence[str] | None = None,
    min_score: float | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Filters:
    """Search filters from call arguments; ``UsageError`` for a path outside the
    repository, for a language or kind that names nothing (aliases such as
    ``py`` and ``func`` are accepted), for a blank keyword and for a
    negative ``min_score``. With ``root``, an absolute path inside it is
    taken as the path from it (:func:`~repolens.validate.check_subpath`)."""
    subpath, language, kind = check_subpath(path, root), check_language(language), check_kind(kind)
    return Filters(
        subpath=subpath,
        languages=(language,) if language else (),
        kinds=(kind,) if kind else (),
        include=check_globs("include", include),
        exclude=check_globs("exclude", exclude),
        keywords=check_keywords(keyword),
        min_score=check_min_score(min_score),
    )


def no_indexed_file(reader: IndexReader, subpath: str, argument: str = "path") -> PathError:
    """The error for a path filter under which the index holds no file (a
    filter that names nothing must not answer "nothing found"), naming the
    indexed path nearest to it (:func:`nearest_indexed`) when there is one.
    ``argument`` is the API name of the filter, for the fix."""
    near = nearest_indexed(reader.paths(), subpath)
    hint = f"; the nearest indexed path is {near!r}" if near else ""
    return PathError(
        f"no indexed file is under {subpath!r}{hint}",
        fix=f"pass a folder or file the index holds as {{{argument}}}",
    )


def nearest_indexed(paths: Sequence[str], subpath: str) -> str:
    """The indexed path that ``subpath`` (under which nothing is indexed)
    most likely meant: below its deepest indexed folder, the entry whose
    name is closest to the next part it names (``src/ap`` -> ``src/app``);
    else that folder itself; "" when nothing is near (the only folder in
    common is the root). Reads every path: only for an error."""
    import difflib  # only for this error

    if not paths:
        return ""
    parts = subpath.split("/")
    folders: dict[str, set[str]] = {}  # indexed folder ("" the root) -> the names right under it
    for path in paths:
        above = ""
        for name in path.split("/"):
            folders.setdefault(above, set()).add(name)
            above = f"{above}/{name}" if above else name
    depth = max(i for i in range(len(parts)) if "/".join(parts[:i]) in folders)
    base = "/".join(parts[:depth])
    names = {name.lower(): name for name in sorted(folders[base], reverse=True)}  # (case aside)
    close = difflib.get_close_matches(parts[depth].lower(), sorted(names), n=1, cutoff=0.6)
    if close:
        return f"{base}/{names[close[0]]}" if base else names[close[0]]
    return base


_SPECS: dict[tuple[str, ...], GitIgnoreSpec] = {}


def _spec(globs: tuple[str, ...]) -> GitIgnoreSpec:
    """Compiled glob sets; a pure cache keyed by the patterns themselves."""
    spec = _SPECS.get(globs)
    if spec is None:
        if len(_SPECS) > 256:
            _SPECS.clear()
        from pathspec import GitIgnoreSpec  # only searches with --include/--exclude pay for it

        spec = _SPECS[globs] = GitIgnoreSpec.from_lines(_any_depth(g) for g in globs)
    return spec


def _any_depth(glob: str) -> str:
    """``*/x`` as a user means it, "x in any folder" (``**/x``): in
    gitignore's syntax a pattern with a slash is anchored at the root, and
    ``*/x`` would match one folder deep only."""
    return f"**/{glob[2:]}" if glob.startswith("*/") else glob
