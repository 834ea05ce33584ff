"""Where the time of ``bench.org scale``'s searches goes: every statement
timed client side (with EXPLAIN ANALYZE of the slowest), the Python time by
area (cProfile), and the cross-repository search (issue 30 item 1) timed
over a stage's indexes."""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from bench.common.stats import ms_pct

# The statements of a search worth an EXPLAIN: the slowest shapes, reads only.
EXPLAINED = 8


@contextlib.contextmanager
def statements_timed(into: list[tuple[str, object, float]]) -> Iterator[None]:
    """Every statement psycopg runs in this process, with its parameters and
    its time seen by the client (round trip and rows included)."""
    import psycopg

    original = psycopg.Cursor.execute

    def timed(self, query, params=None, **kwargs):  # psycopg's own signature
        started = time.perf_counter()
        try:
            return original(self, query, params, **kwargs)
        finally:
            text = query if isinstance(query, str) else query.as_string(self.connection)
            into.append((" ".join(text.split()), params, time.perf_counter() - started))

    psycopg.Cursor.execute = timed
    try:
        yield
    finally:
        psycopg.Cursor.execute = original


def where_time_goes(calls: Sequence[Callable[[], object]], url: str) -> dict:
    """Per statement (slowest first): calls and ms per search; EXPLAIN ANALYZE
    of the slowest call of each of the slowest read statements."""
    import psycopg

    seen: list[tuple[str, object, float]] = []
    started = time.perf_counter()
    with statements_timed(seen):
        for call in calls:
            call()
    wall = time.perf_counter() - started
    shapes: dict[str, dict] = {}
    for sql, params, s in seen:
        shape = shapes.setdefault(sql, {"sql": sql, "calls": 0, "s": 0.0, "max_s": 0.0, "params": None})
        shape["calls"] += 1
        shape["s"] += s
        if s >= shape["max_s"]:
            shape["max_s"], shape["params"] = s, params
    ranked = sorted(shapes.values(), key=lambda x: -x["s"])
    n = len(calls)
    out = {"searches": n, "wall_ms": wall * 1000 / n, "statements_ms": sum(x["s"] for x in ranked) * 1000 / n}
    out["shapes"] = [
        {"sql": x["sql"], "per_search": x["calls"] / n, "ms_per_search": x["s"] * 1000 / n,
         "max_ms": x["max_s"] * 1000}
        for x in ranked
    ]  # fmt: skip
    # EXPLAIN ANALYZE runs the statement: each in a transaction rolled back
    # (a search also writes: it remembers its result).
    with psycopg.connect(url) as conn:
        explained = [(shape, x) for shape, x in zip(out["shapes"], ranked, strict=True) if x["sql"]]
        for shape, x in explained[:EXPLAINED]:
            try:
                rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + x["sql"], x["params"]).fetchall()
                shape["plan"] = "\n".join(r[0] for r in rows)
            except psycopg.Error as exc:
                shape["plan"] = f"(EXPLAIN failed: {exc})"
            conn.rollback()
    return out


def ask_across(roots: Mapping[str, Path], text: str) -> object:
    """``text`` asked of every root in ``roots`` (key -> folder, each bound to
    the stage's database as a server's [roots] binds them) in one call,
    ranked across them (issue 30 item 1); every repository must answer."""
    from repolens import service
    from repolens.search.fanout import Target

    reply = service.search_across(text, [Target(key, root) for key, root in roots.items()])
    failed = [note for note in reply.notes if "did not answer" in note]
    if failed:
        raise SystemExit(f"cross-repository search: {len(failed)} did not answer, e.g. {failed[0]}")
    return reply


@contextlib.contextmanager
def per_repository(into: list[tuple[float, float]]) -> Iterator[None]:
    """Each repository's part of a cross-repository search (opening its
    store and reader, its search, its freshness check): wall and its
    thread's CPU seconds, whichever thread ran it."""
    import repolens.search.across as across_module

    original = across_module.ask_each

    def timed_each(targets, ask):  # ask_each's own signature
        def timed(target):
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return ask(target)
            finally:
                into.append((time.perf_counter() - wall, time.thread_time() - cpu))

        return original(targets, timed)

    across_module.ask_each = timed_each
    try:
        yield
    finally:
        across_module.ask_each = original


def across(roots: Mapping[str, Path], texts: Sequence[str], url: str, rounds: int) -> dict:
    """Cross-repository search p50/p95 (each question once to warm, then
    ``rounds`` timed), then one more pass saying where its time goes: the
    repositories' parts (summed over the threads that ran them), the
    process's CPU, and every statement (:func:`where_time_goes`)."""
    ask_across(roots, texts[0])  # opens every repository's reader
    times = []
    for text in texts:
        for r in range(rounds + 1):
            started = time.perf_counter()
            ask_across(roots, text)
            if r:
                times.append(time.perf_counter() - started)
    parts: list[tuple[float, float]] = []
    cpu = time.process_time()
    with per_repository(parts):
        profile = where_time_goes([lambda t=t: ask_across(roots, t) for t in texts], url)
    n = len(texts)
    profile["process_cpu_ms"] = (time.process_time() - cpu) * 1000 / n
    profile["repositories"] = len(parts) / n
    profile["repository_ms"] = sum(w for w, _ in parts) * 1000 / n
    profile["repository_cpu_ms"] = sum(c for _, c in parts) * 1000 / n
    return {"p50_ms": ms_pct(times, 0.5), "p95_ms": ms_pct(times, 0.95), "n": len(times), "profile": profile}


def area(file: str, function: str) -> str:
    """What a profiled function is part of: a repolens package, psycopg,
    numpy, or the rest (the standard library, other libraries)."""
    found = re.search(r"/repolens/([\w/]+?)(?:/__init__)?\.py$", file)
    if found:
        parts = found.group(1).split("/")
        return "repolens." + ".".join(parts[:2] if parts[0] == "store" else parts[:1])
    where = file if file != "~" else function  # a builtin: its name says its module
    for name in ("psycopg", "numpy", "tokenizers", "onnxruntime"):
        if name in where:
            return name
    return "the rest (standard library, other libraries)"


def python_time(calls: Sequence[Callable[[], object]]) -> dict:
    """Own time per area and the functions costing most, per call, under
    cProfile (which slows Python code more than C: read shares, not ms)."""
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for call in calls:
        call()
    profile.disable()
    n = len(calls)
    wall = (time.perf_counter() - started) * 1000 / n
    areas: Counter[str] = Counter()
    functions = []
    for (file, line, name), (_, calls_made, own, total, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        areas[area(file, name)] += own * 1000 / n
        functions.append({"function": f"{Path(file).name}:{line}({name})", "area": area(file, name),
                          "calls": calls_made / n, "own_ms": own * 1000 / n,
                          "total_ms": total * 1000 / n})  # fmt: skip
    functions.sort(key=lambda f: -f["own_ms"])
    return {"searches": n, "wall_ms": wall, "areas": dict(areas.most_common()), "functions": functions[:15]}
