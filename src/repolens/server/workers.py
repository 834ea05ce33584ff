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
rewrites whenever the set changes (:func:`read_workers`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from socket import socket
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from repolens.server.config import ServeConfig

WORKERS_FILE = "workers.json"


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class AppRecipe:
    """What a worker needs to build the app itself: the app (an MCP server
    with its task groups and caches) cannot cross a process boundary, these
    few values can."""

    config: ServeConfig
    host: str
    no_auth: bool
    index_dir: Path | None
    workers_file: Path | None

    def build(self) -> ASGIApp:
        import logging

        from repolens.server.web import build_app

        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
        return build_app(
            self.config,
            host=self.host,
            no_auth=self.no_auth,
            index_dir=self.index_dir,
            workers_file=self.workers_file,
        )


class WorkerConfig(uvicorn.Config):
    """uvicorn's settings for a worker: the app comes from ``recipe``,
    built in the worker (uvicorn pickles this config into each spawned
    process and loads the app there)."""

    def __init__(self, recipe: AppRecipe, **kwargs: Any) -> None:
        super().__init__(app="repolens.server.workers:AppRecipe", factory=True, **kwargs)
        self.recipe = recipe

    def load_app(self) -> Any:
        return self.recipe.build


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


def run_workers(recipe: AppRecipe, sockets: list[socket], workers: int, **uvicorn_options: Any) -> None:
    """Serve ``sockets`` from ``workers`` spawned processes until SIGINT or
    SIGTERM; each worker is stopped and joined before this returns."""
    with tempfile.TemporaryDirectory(prefix="repolens-workers-") as tmp:
        workers_file = Path(tmp) / WORKERS_FILE
        recipe = AppRecipe(recipe.config, recipe.host, recipe.no_auth, recipe.index_dir, workers_file)
        config = WorkerConfig(recipe, workers=workers, **uvicorn_options)
        supervisor = Supervisor(config, sockets, workers_file)
        try:
            supervisor.run()
        finally:
            supervisor.should_exit.set()
            with contextlib.suppress(Exception):
                supervisor.terminate_all()
                supervisor.join_all()
