"""The development questions, their checkouts and indexes, and one repolens answer.

What the quality benchmarks share (``bench.devset``, ``bench.org ranking``,
``bench.replies``, ``bench.train_ranker``, the probes): the question files
and how to load them; the index cache outside the repository, keyed by the
settings that change an index (``INDEX_KEYS``), the code's format versions
and the chunking fingerprint; named settings variants; and a repolens
answer as the metrics (``bench.common.metrics``) read it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import repolens
from bench.common.metrics import Answer, Hit, line_ranges
from bench.common.paths import SHARED, data_default
from repolens import service
from repolens.chunking.dispatch import chunking_config
from repolens.errors import RepolensError
from repolens.reply.modes import SearchReply
from repolens.settings import ENV_PREFIX, Settings, load_settings
from repolens.store.handles import readers
from repolens.store.versions import format_versions

DATA_FILES = ("swebench-dev.json", "commits-dev.json", "identifiers-dev.json")
# The figure each set is judged by (shared/bench/README.md): the identifier
# questions have one gold file, the definition, which a good tool puts first.
# ``subjects``: commit subjects asked alone, a kind of the mined training set
# (bench.mine_questions), which --files reads too.
KEY_FIGURES = {
    "swebench": "acc5",
    "commits": "acc5",
    "subjects": "acc5",
    "identifiers": "acc1",
    "issues": "acc5",
    "meaning": "acc5",
}


# Named variants: settings overrides (keys of repolens.settings.Settings). Add
# entries here as settings appear; ad-hoc ones come from --variant.
_PLAIN = {
    "symbol_boost": "0",
    "priors": "0",
    "file_weight": "0",
    "diversity": "1",
    "fair_share": "0",
    "path_boost": "0",
    "chunk_merge_lines": "2",
    "vectors": "0",
    "field_weights": "0",
}
_LADDER = [
    ("syntax", {"chunker": "syntax"}),
    ("+symbols", {"symbol_boost": "1"}),
    ("+priors", {"priors": "1"}),
    ("+fairshare", {"fair_share": "1"}),
    ("+packed", {"chunk_merge_lines": "30"}),
    ("+spread", {"file_weight": "0.5", "diversity": "0.7"}),
    ("+paths", {"path_boost": "0.5"}),
    # measured and left off: name and signature fields weighted over bodies
    ("+fields", {"field_weights": "1"}),
]


def _ladder() -> dict[str, dict[str, str]]:
    """Each rung adds one lever to the one before it."""
    out, acc = {}, dict(_PLAIN)
    for name, change in _LADDER:
        acc = {**acc, **change}
        out[name] = dict(acc)
    return out


VARIANTS: dict[str, dict[str, str]] = {
    # plain BM25 over line windows: every query token at weight 1
    "bm25": {"chunker": "windows", **_PLAIN, "query_weights": "0"},
    # the spine: the issue 2 engine, BM25 over line windows with weighted query terms
    "spine": {"chunker": "windows", **_PLAIN},
    # the ablation ladder of issues 3 and 4, one lever at a time
    **_ladder(),
    # whatever the current defaults are, and each ranking (issue 28)
    "default": {},
    "tuned": {"ranking": "tuned"},
    "learned": {"ranking": "learned"},
    "windows": {"chunker": "windows"},
}

# Settings that change what an index contains; with format_versions() and the
# chunking fingerprint they key the index cache. A setting missing here is
# assumed to act at query time only: add it when it affects indexing.
INDEX_KEYS = ("chunker", "chunk_merge_lines", "max_file_bytes", "vectors", "embed_style")


@dataclass(frozen=True)
class Variant:
    name: str
    overrides: dict[str, str]


@dataclass
class IndexStatus:
    state: str  # built | cached | failed | missing checkout
    seconds: float = 0.0  # fresh build time (for cached: the time recorded when it was built)
    files: int = 0
    chunks: int = 0
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.state in ("built", "cached")


# -- settings and the index cache ----------------------------------------------


@contextlib.contextmanager
def settings_env(overrides: dict[str, str]) -> Iterator[None]:
    """Set ``REPOLENS_<KEY>`` for each override; restore the previous values on exit."""
    saved = {}
    for key, value in overrides.items():
        name = ENV_PREFIX + key.upper()
        saved[name] = os.environ.get(name)
        os.environ[name] = str(value)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def index_identity(settings: Settings, history: bool = False) -> dict:
    """What a cached index depends on. ``history``: the checkout is a git work
    tree whose history is indexed too, so its index differs from the plain
    checkout's of the same name (plain checkouts keep their keys)."""
    name, version = chunking_config(settings.chunker, settings.chunk_merge_lines)
    # Vector settings only count when vectors are on, so lexical-only
    # variants keep sharing one cached index.
    ident = {
        key: getattr(settings, key)
        for key in INDEX_KEYS
        if settings.vectors or key not in ("vectors", "embed_style")
    }
    if history:
        ident["history_commits"] = settings.history_commits
    return {**ident, **format_versions(), "chunking": f"{name}/v{version}"}


def future_visible(root: Path, commit: str) -> str:
    """Why a git checkout could show the history leg a commit that is not
    ``commit`` or one of its ancestors ("" when it cannot): HEAD must be the
    searched commit, and no ref or reflog may reach past it. (The objects
    are borrowed from a mirror that holds the fix, but only what refs reach
    is history; repolens reads ``git log HEAD``, never ``--all``.)"""

    def git(*a: str) -> str:
        proc = subprocess.run(["git", "-C", str(root), *a], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else f"error: {proc.stderr.strip()}"

    head = git("rev-parse", "HEAD")
    if head != commit:
        return f"HEAD is {head[:12]}, not the searched commit {commit[:12]}"
    beyond = git("rev-list", "--all", "--reflog", "--count", "--not", "HEAD")
    if beyond != "0":
        return f"{beyond} commits reachable from refs or reflogs are not ancestors of HEAD"
    return ""


def identity_key(identity: dict) -> str:
    return hashlib.blake2b(json.dumps(identity, sort_keys=True).encode(), digest_size=6).hexdigest()


def ensure_index(root: Path, index_dir: Path, identity: dict, reindex: bool) -> IndexStatus:
    """Reuse the cached index in ``index_dir`` or build it (settings come from the environment).
    Two runs that share a cache take turns on one index (a lock file beside
    it): the second reuses what the first built, never builds over it."""
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(index_dir.with_name(index_dir.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_index(root, index_dir, identity, reindex)


def _ensure_index(root: Path, index_dir: Path, identity: dict, reindex: bool) -> IndexStatus:
    meta_path = index_dir / "devset-meta.json"
    if not reindex and meta_path.is_file() and service.open_store(root, index_dir).current():
        meta = json.loads(meta_path.read_text())
        return IndexStatus("cached", meta["seconds"], meta["files"], meta["chunks"])
    if index_dir.exists():
        shutil.rmtree(index_dir)
    try:
        report = service.index_repo(root, index_dir=index_dir)
    except Exception as exc:  # reported and scored 0; the run goes on
        return IndexStatus("failed", error=f"{type(exc).__name__}: {exc}")
    meta = {"identity": identity, "seconds": report.seconds, "files": report.files, "chunks": report.chunks}
    meta_path.write_text(json.dumps({**meta, "built_at": datetime.now(UTC).isoformat()}, indent=1))
    return IndexStatus("built", report.seconds, report.files, report.chunks)


def repolens_answer(text: str, root: Path, index_dir: Path, top_k: int | None, warm: bool = False) -> Answer:
    """One search with the current settings; the hits are the packet's rendered blocks.

    ``warm``: ask the question once untimed first, so the latency is that of a
    server that has answered before (the reader's lazy structures, such as the
    path-mention table, built; the question's postings in the page cache).
    Without it, a checkout asked a single question times that one-off set-up.
    """
    if warm:
        service.search_code(text, root, index_dir=index_dir, top_k=top_k, auto_index=False)
    start = time.perf_counter()
    reply = service.search_code(text, root, index_dir=index_dir, top_k=top_k, auto_index=False)
    return reply_answer(reply, (time.perf_counter() - start) * 1000)


def reply_answer(reply: SearchReply, latency: float) -> Answer:
    """A packet reply as the metrics read it: its blocks, then its pointers."""
    packet = reply.packet.to_json()
    hits = [
        Hit(h["path"], ((h["start_line"], h["end_line"]),), line_ranges(shown_numbers(h["text"])))
        for h in packet["hits"]
    ]
    # Pointers to the next files cite a file and a span, but show no line.
    hits += [
        Hit(f["path"], ((f["start_line"], f["end_line"]),), (), pointer=True)
        for f in packet.get("next_files", ())
    ]
    extra = {"omitted": len(packet["omitted"]), "path_only": sum(h["path_only"] for h in packet["hits"])}
    return Answer(hits, len(reply.text), latency, extra=extra)


def shown_numbers(block_text: str) -> list[int]:
    """The line numbers a packet block shows (its ``N: text`` lines)."""
    heads = (line.partition(": ")[0] for line in block_text.split("\n")[1:])
    return [int(h) for h in heads if h.isdigit()]


def add_checkout_options(ap: argparse.ArgumentParser, checkouts: str = "checkouts-git") -> None:
    """``--checkouts``, ``--index-cache`` and ``--data``, as every benchmark of
    the development questions takes them: the checkouts (``checkouts-git``,
    the history checkouts, or ``checkouts``, the plain ones) and the index
    cache under ``$REPOLENS_BENCH_DATA`` by default, the questions from the
    shared folder. :func:`checked_folders` refuses what is missing."""
    ap.add_argument(
        "--checkouts",
        type=Path,
        default=data_default(checkouts),
        help=f"folder of <owner>__<name>@<commit12> checkouts (default $REPOLENS_BENCH_DATA/{checkouts})",
    )
    ap.add_argument(
        "--index-cache",
        type=Path,
        default=data_default("index-cache"),
        help="indexes, one folder per checkout and index identity (default $REPOLENS_BENCH_DATA/index-cache)",
    )
    ap.add_argument("--data", type=Path, default=SHARED, help="folder of the question files")


def checked_folders(args: argparse.Namespace) -> None:
    """Exit with the fix when ``--checkouts`` or ``--index-cache`` is missing;
    make them absolute."""
    if args.checkouts is None or args.index_cache is None:
        sys.exit(
            "no checkouts or index cache: set REPOLENS_BENCH_DATA or pass --checkouts DIR and "
            f"--index-cache DIR (make the checkouts with {args.data / 'make_checkouts.sh'}, bench/README.md)"
        )
    if not args.checkouts.is_dir():
        sys.exit(
            f"{args.checkouts} is not a folder: make the checkouts with {args.data / 'make_checkouts.sh'}"
        )
    args.checkouts = args.checkouts.expanduser().resolve()
    args.index_cache = args.index_cache.expanduser().resolve()


def load_queries(
    data: Path,
    only: str | None,
    limit: int | None,
    sets: list[str] | None = None,
    files: tuple[str, ...] = DATA_FILES,
) -> list[dict]:
    """The queries of ``files`` (in ``data``; the development set's by default) in file
    order; ``sets`` (their ``set`` field) narrows them."""
    queries = [q for name in files for q in json.loads((data / name).read_text())]
    if sets:
        queries = [q for q in queries if q["set"] in sets]
    if only:
        queries = [q for q in queries if re.search(only, q["id"])]
    return queries[:limit] if limit else queries


def checkout_name(q: dict) -> str:
    return f"{q['repo'].replace('/', '__')}@{q['commit'][:12]}"


def parse_variants(names: str, adhoc: list[str]) -> list[Variant]:
    """Registry names from --variants, then ``name:key=val,key=val`` from --variant; validated."""
    out = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        if name not in VARIANTS:
            sys.exit(f"unknown variant {name!r}; known: {', '.join(VARIANTS)} (or use --variant name:k=v)")
        out.append(Variant(name, VARIANTS[name]))
    for spec in adhoc:
        name, _, pairs = spec.partition(":")
        items = [p.split("=", 1) for p in pairs.split(",") if p]
        if not name or any(len(kv) != 2 for kv in items):
            sys.exit(f"--variant {spec!r}: expected name:key=val,key=val")
        out.append(Variant(name, {k.strip(): v.strip() for k, v in items}))
    for v in out:
        try:  # as call arguments: unknown keys raise here (the environment would ignore them)
            load_settings(None, v.overrides)
        except RepolensError as exc:
            sys.exit(f"variant {v.name}: {exc}")
    if len({v.name for v in out}) < len(out) or {"rg", "rg/full"} & {v.name for v in out}:
        sys.exit("variant names must be unique and not rg or rg/full")
    return out


def build_indexes(queries, variants, args) -> tuple[dict, dict]:
    """Build or reuse every index the run needs; returns (dir, status) per (checkout, variant)."""
    dirs: dict[tuple[str, str], Path] = {}
    status: dict[tuple[str, str], IndexStatus] = {}
    commits = {checkout_name(q): q["commit"] for q in queries}
    checkouts = list(commits)
    todo = len(checkouts) * len(variants)
    step = 0
    for ck in checkouts:
        root = args.checkouts / ck
        by_key: dict[str, IndexStatus] = {}  # variants sharing an index identity share one build
        if not (root / ".checkout_ok").is_file():
            step += len(variants)
            for v in variants:
                status[ck, v.name] = IndexStatus("missing checkout", error=f"{root} has no .checkout_ok")
            print(f"[{step}/{todo}] {ck}: missing checkout", file=sys.stderr)
            continue
        is_git = (root / ".git").exists()
        leak = future_visible(root, commits[ck]) if is_git else ""
        if leak:
            step += len(variants)
            for v in variants:
                status[ck, v.name] = IndexStatus("failed", error=f"future history visible: {leak}")
            print(f"[{step}/{todo}] {ck}: future history visible: {leak}", file=sys.stderr)
            continue
        for v in variants:
            step += 1
            with settings_env(v.overrides):
                identity = index_identity(load_settings(root), history=is_git)
                key = identity_key(identity)
                dirs[ck, v.name] = args.index_cache / ck / key
                if key not in by_key:
                    by_key[key] = ensure_index(root, dirs[ck, v.name], identity, args.reindex)
            st = status[ck, v.name] = by_key[key]
            detail = st.error or f"{st.seconds:.1f}s, {st.files} files, {st.chunks} chunks"
            print(f"[{step}/{todo}] {ck} {v.name}: {st.state} ({detail})", file=sys.stderr, flush=True)
        readers.clear()
    return dirs, status


def code_commit(folder: Path | None = None) -> str:
    """The git commit of ``folder`` (this checkout by default), ``+dirty``
    when tracked files differ from it; ``unknown`` outside a git checkout.
    No path: it goes into files that are committed (a model's provenance)."""
    where = str(folder or Path(repolens.__file__).resolve().parents[1])

    def git(*a: str) -> str:
        proc = subprocess.run(["git", "-C", where, *a], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    head = git("rev-parse", "HEAD")
    if not head:
        return "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def engine_state() -> str:
    """Which repolens code ran: its folder, and the git commit when that folder is in a checkout."""
    src = Path(repolens.__file__).resolve().parents[1]

    def git(*a: str) -> str:
        proc = subprocess.run(["git", "-C", str(src), *a], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return f"repolens from {src} (not a git checkout)"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    return f"repolens {head}{' + uncommitted changes' if dirty else ''} from {src}"
