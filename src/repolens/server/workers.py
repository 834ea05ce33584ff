"""HTTP serving from several processes: one supervisor, N workers.

One Python process answers tool calls on one core at a time (the GIL), so a
team server under load leaves the other cores idle. ``serve --http
--workers N`` binds the socket once and hands it to N spawned worker
processes, each running uvicorn and its own copy of the app over the same
indexes, opened read-only (search writes only the remembered results, which
SQLite locks across processes). The supervisor runs what must run once: the
first indexing, the file watcher and the background embedder, and it
replaces a worker that dies (uvicorn's :class:`~uvicorn.supervisors.Multiprocess`
does the pinging, replacing and stopping).

MCP over HTTP is served stateless (no ``Mcp-Session-Id``): the kernel hands
each connection to whichever worker accepts first, so a session held in one
worker's memory would be missing in the next. Stateless, every request
stands alone and any worker can answer it; nothing the tools do needs a
session (progress goes out on the request's own stream).

``/health`` reports the workers from a small JSON file the supervisor
rewrites whenever the set changes (:func:`read_workers`), and ``/metrics``
sums every process's counters from a folder they share
(:func:`shared_metrics`, :mod:`repolens.server.metrics`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from socket import socket
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

if TYPE_CHECKING:
    from starlette.types import ASGIApp

WORKERS_FILE = "workers.json"
# prometheus_client's multiprocess mode: the folder every process writes its metrics to.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


# What a worker builds its app with: called in the worker, it returns the
# app. It crosses the process boundary pickled (uvicorn pickles the config
# into each spawned process), so it is a picklable callable, such as
# :class:`repolens.server.web.AppRecipe`, holding plain values: the app (an MCP
# server with its task groups and caches) cannot cross it.
AppFactory = Callable[[], "ASGIApp"]


class WorkerConfig(uvicorn.Config):
    """uvicorn's settings for a worker: the app comes from ``factory``,
    called in the worker (uvicorn loads the app there)."""

    def __init__(self, factory: AppFactory, **kwargs: Any) -> None:
        super().__init__(app="repolens.server.web:AppRecipe", factory=True, **kwargs)
        self.app_factory = factory

    def load_app(self) -> Any:
        return self.app_factory


class Supervisor(Multiprocess):
    """uvicorn's process supervisor, publishing its workers' ids for
    ``/health`` and saying on stderr when it replaces one."""

    def __init__(self, config: WorkerConfig, sockets: list[socket], workers_file: Path) -> None:
        super().__init__(config, sockets)
        self.workers_file = workers_file
        self._published: list[int] = []

    def init_processes(self) -> None:
        super().init_processes()
        self.publish()

    def keep_subprocess_alive(self) -> None:
        before = self.pids()
        super().keep_subprocess_alive()
        after = self.pids()
        for gone, new in zip(before, after, strict=False):
            if gone != new:
                print(f"repolens: worker {gone} ended; started worker {new}", file=sys.stderr, flush=True)
        self.publish()

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.pid is not None]

    def publish(self) -> None:
        pids = self.pids()
        if pids == self._published:
            return
        body = json.dumps({"supervisor": os.getpid(), "workers": pids})
        fd, tmp = tempfile.mkstemp(dir=self.workers_file.parent, prefix=".workers-")
        with os.fdopen(fd, "w") as fh:
            fh.write(body)
        os.replace(tmp, self.workers_file)
        self._published = pids


def read_workers(workers_file: Path | None) -> dict[str, Any]:
    """What ``/health`` says about the processes: how many workers serve,
    their ids, and which one answered. One process without a supervisor
    reports itself."""
    here = os.getpid()
    if workers_file is None:
        return {"workers": 1, "worker_pids": [here], "pid": here}
    try:
        state = json.loads(workers_file.read_text())
        pids = [int(p) for p in state["workers"]]
    except (OSError, ValueError, KeyError, TypeError):
        pids = [here]
    return {"workers": len(pids), "worker_pids": pids, "pid": here}


def run_workers(
    factory_for: Callable[[Path], AppFactory], sockets: list[socket], workers: int, **uvicorn_options: Any
) -> None:
    """Serve ``sockets`` from ``workers`` spawned processes until SIGINT or
    SIGTERM; each worker is stopped and joined before this returns. Each
    builds its app with ``factory_for(workers_file)`` (the supervisor's list
    of workers, which the app's ``/health`` reads: :func:`read_workers`)."""
    with tempfile.TemporaryDirectory(prefix="repolens-workers-") as tmp:
        workers_file = Path(tmp) / WORKERS_FILE
        config = WorkerConfig(factory_for(workers_file), workers=workers, **uvicorn_options)
        supervisor = Supervisor(config, sockets, workers_file)
        try:
            supervisor.run()
        finally:
            supervisor.should_exit.set()
            with contextlib.suppress(Exception):
                supervisor.terminate_all()
                supervisor.join_all()


@contextlib.contextmanager
def shared_metrics(processes: int) -> Iterator[Path | None]:
    """With several processes, a fresh folder every one of them writes its
    metrics to (``PROMETHEUS_MULTIPROC_DIR``, inherited by the spawned
    workers), removed afterwards; with one, nothing (the process counts in
    memory). Entered before ``prometheus_client`` is imported, as it picks
    its mode then (:mod:`repolens.server.web` imports the metrics only inside
    its functions). A folder the caller's environment names is replaced for
    the server's lifetime: it must be empty when the processes writing it start."""
    if processes <= 1:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="repolens-metrics-"))
    before = os.environ.get(MULTIPROC_ENV)
    os.environ[MULTIPROC_ENV] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(MULTIPROC_ENV, None)
        else:
            os.environ[MULTIPROC_ENV] = before
        shutil.rmtree(folder, ignore_errors=True)
