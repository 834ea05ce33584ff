"""Prometheus metrics of ``serve --http``: ``GET /metrics`` in the text format.

What is counted, and where it is observed:

* ``repolens_http_requests_total{route,method,status}`` and
  ``repolens_http_request_seconds{route}``: every HTTP request, by the
  access-log middleware (:mod:`repolens.server.access`); ``route`` is one of
  a fixed few names (``mcp``, ``health``, ``search``, ...), never the raw
  path, so a client cannot grow the label set.
* ``repolens_tool_calls_total{tool,outcome}`` and
  ``repolens_tool_call_seconds{tool}``: every tool call, MCP or the search
  page (both go through :meth:`repolens.server.calls.RepolensServer.call_tool`);
  ``outcome`` is ``ok`` or ``error``, an unknown tool's name is ``other``.
* ``repolens_index_build_seconds{repo,mode}``: the builds and refreshes the
  server runs by itself (the first index at start, the watcher's refreshes);
  ``index_repo`` and ``refresh_index`` calls are in the tool metrics.
* ``repolens_index_files``, ``_chunks``, ``_symbols``, ``_vectors`` and
  ``_updated_timestamp_seconds`` (``{repo}``), and ``repolens_index_up``: read
  from each served repository's published index when scraped, so they are
  the same whichever worker answers, and true for an index another process
  (an indexer beside the server) writes.

Several worker processes (``--workers N``) are one server to Prometheus: the
supervisor gives every process one folder (``PROMETHEUS_MULTIPROC_DIR``, set
before ``prometheus_client`` is first imported:
:func:`repolens.server.workers.shared_metrics`), each
process writes its counters there, and whichever worker is scraped sums them
(``prometheus_client``'s multiprocess mode). Per-worker labels were the other
choice, but a scrape reaches one worker, chosen by the kernel, so each scrape
would see another process's counts. The price: process metrics
(``process_cpu_seconds_total`` ...) are left out with several workers, as that
mode cannot sum them.

The metrics are module-level objects, as ``prometheus_client`` means them to
be: one set per process, which is what a process's counters are.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import anyio.to_thread
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from starlette.types import Receive, Scope, Send

from repolens import __version__
from repolens.errors import RepolensError
from repolens.server.workers import MULTIPROC_ENV
from repolens.store import open_store
from repolens.store.handles import readers

METRICS_PATH = "/metrics"
OTHER = "other"

# One registry of our own (not prometheus_client's global one): a library
# that registers metrics of its own in this process adds nothing to ours.
_registry = CollectorRegistry()
_MULTIPROCESS = bool(os.environ.get(MULTIPROC_ENV))  # decided at import, as prometheus_client decides
if not _MULTIPROCESS:
    ProcessCollector(registry=_registry)

# Seconds: a search answers in milliseconds, a read in less, an index build in minutes.
_CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
_BUILD_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0)

HTTP_REQUESTS = Counter(
    "repolens_http_requests", "HTTP requests answered", ["route", "method", "status"], registry=_registry
)
HTTP_SECONDS = Histogram(
    "repolens_http_request_seconds",
    "Time to answer an HTTP request (to the end of its body)",
    ["route"],
    buckets=_CALL_BUCKETS,
    registry=_registry,
)
TOOL_CALLS = Counter(
    "repolens_tool_calls", "Tool calls (MCP and the search page)", ["tool", "outcome"], registry=_registry
)
TOOL_SECONDS = Histogram(
    "repolens_tool_call_seconds", "Time a tool call took", ["tool"], buckets=_CALL_BUCKETS, registry=_registry
)
BUILD_SECONDS = Histogram(
    "repolens_index_build_seconds",
    "Index builds and refreshes the server ran by itself",
    ["repo", "mode"],
    buckets=_BUILD_BUCKETS,
    registry=_registry,
)


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(route, method if method in _METHODS else OTHER, str(status)).inc()
    HTTP_SECONDS.labels(route).observe(seconds)


_METHODS = frozenset({"GET", "POST", "DELETE", "HEAD", "OPTIONS", "PUT", "PATCH"})


def observe_call(tool: str | None, seconds: float, error: str | None) -> None:
    """A tool call (:attr:`repolens.server.calls.RepolensServer.on_call`);
    ``tool`` None: a name no tool has, counted as ``other``."""
    name = tool or OTHER
    TOOL_CALLS.labels(name, "error" if error is not None else "ok").inc()
    TOOL_SECONDS.labels(name).observe(seconds)


def observe_build(repo: str, mode: str, seconds: float) -> None:
    BUILD_SECONDS.labels(repo, mode).observe(seconds)


# -- the index facts, read when scraped ------------------------------------------


@dataclass(frozen=True)
class IndexFacts:
    repo: str
    files: int
    chunks: int
    symbols: int
    vectors: int
    updated: float | None  # seconds since the epoch


def index_facts(repo: str, root: Path, index_dir: Path | None) -> IndexFacts | None:
    """What ``repo``'s published index holds, None when it has none or cannot be read."""
    try:
        store = open_store(root, index_dir)
        current = store.current()
        if current is None:
            return None
        reader = readers.get(store, current)
        counts = reader.counts()
        updated = _timestamp(reader.meta().get("updated_at", ""))
        return IndexFacts(
            repo, counts["files"], counts["chunks"], counts["symbols"], int(reader.vector_count()), updated
        )
    except RepolensError:
        return None


def _timestamp(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


class IndexCollector:
    """The index gauges, from ``facts`` (one entry per served repository, None: no index)."""

    def __init__(self, facts: Mapping[str, IndexFacts | None]) -> None:
        self.facts = facts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        info = GaugeMetricFamily("repolens_build_info", "The repolens version serving", labels=["version"])
        info.add_metric([__version__], 1)
        yield info
        up = GaugeMetricFamily(
            "repolens_index_up", "1 when the repository's index could be read", labels=["repo"]
        )
        for repo, facts in self.facts.items():
            up.add_metric([repo], 0 if facts is None else 1)
        yield up
        read = [f for f in self.facts.values() if f is not None]
        for field, what in (
            ("files", "Files in the published index"),
            ("chunks", "Chunks in the published index"),
            ("symbols", "Symbols in the published index"),
            ("vectors", "Chunks with a vector"),
        ):
            family = GaugeMetricFamily(f"repolens_index_{field}", what, labels=["repo"])
            for f in read:
                family.add_metric([f.repo], getattr(f, field))
            yield family
        updated = GaugeMetricFamily(
            "repolens_index_updated_timestamp_seconds",
            "When the published index was last written",
            labels=["repo"],
        )
        for f in read:
            if f.updated is not None:
                updated.add_metric([f.repo], f.updated)
        yield updated


def exposition(facts: Mapping[str, IndexFacts | None]) -> bytes:
    """The text a scrape gets: this process's metrics (or, with several
    workers, every process's, summed), then the index gauges."""
    if _MULTIPROCESS:
        counted = CollectorRegistry()
        multiprocess.MultiProcessCollector(counted)
    else:
        counted = _registry
    indexes = CollectorRegistry(auto_describe=False)
    indexes.register(IndexCollector(facts))
    return generate_latest(counted) + generate_latest(indexes)


class MetricsEndpoint:
    """ASGI app answering ``GET /metrics``; ``targets`` are the served
    repositories, (name, root, index folder). Who may ask is decided in front
    of it (:mod:`repolens.server.web`: the token, unless configured open)."""

    def __init__(self, targets: list[tuple[str, Path, Path | None]]) -> None:
        self.targets = targets

    def scrape(self) -> bytes:
        return exposition({name: index_facts(name, root, idx) for name, root, idx in self.targets})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _answer(send, 405, b"", [(b"allow", b"GET, HEAD")])
            return
        body = await anyio.to_thread.run_sync(self.scrape)  # store reads: off the event loop
        await _answer(
            send,
            200,
            b"" if scope["method"] == "HEAD" else body,
            [(b"content-type", CONTENT_TYPE_LATEST.encode())],
        )


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
