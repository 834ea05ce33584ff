"""The pool a search of several repositories runs on: keys spread over its
threads, a repository that never answers named while the others answer, no
lock held while a store connects, readers bounded, and a database that is
down said as such."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from repolens import service
from repolens.errors import StoreUnavailableError
from repolens.search.across import ask_across, merge_answers
from repolens.search.fanout import Pool, Target
from repolens.search.filters import Filters
from repolens.store import open_store
from repolens.store.handles import ReaderCache, readers
from repolens.store.postgres import PgStore
from repolens.store.postgres.connect import close_pools, pool_for, pooled

WEB = {
    "web/headers.py": "def parse_header(line):\n    name, _, value = line.partition(':')\n    return name\n"
}
BILLING = {"billing/cards.py": "def charge_card(card, amount):\n    return gateway.charge(card, amount)\n"}
QUESTION = "parse the header line and charge the card"


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    readers.clear()
    close_pools()


@dataclass
class Silent:
    """A TCP port that takes connections and never says a word: a database
    server that hangs. ``accepted`` is set once a client is connected."""

    port: int
    accepted: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"postgresql://repolens@127.0.0.1:{self.port}/hung"


@pytest.fixture
def silent() -> Iterator[Silent]:
    listener = socket.create_server(("127.0.0.1", 0))
    # accept() in a thread is not woken by closing its socket (the teardown waited
    # out its join's 10 s): it wakes every 0.1 s to see whether the test is over
    listener.settimeout(0.1)
    done = threading.Event()
    server = Silent(listener.getsockname()[1])
    held: list[socket.socket] = []

    def hold(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while conn.recv(4096):  # read what the client sends, answer nothing
                pass

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # the listener was closed: the test is over
                return
            held.append(conn)
            server.accepted.set()
            threading.Thread(target=hold, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        done.set()
        thread.join(timeout=10)
        assert not thread.is_alive(), "the silent server did not stop"
        listener.close()
        for conn in held:
            conn.close()


def test_keys_spread_evenly_over_the_threads_and_stay_on_theirs():
    """Eight names of one byte sum (the old choice put them all on one thread)."""
    keys = ["app1", "ap1p", "a1pp", "1app", "pa1p", "p1ap", "1pap", "pp1a"]
    pool = Pool(4)
    homes = [pool.home(key) for key in keys]
    assert sorted(Counter(homes).values()) == [2, 2, 2, 2]
    assert [pool.home(key) for key in reversed(keys)] == homes[::-1]


def test_a_repository_that_never_answers_is_named_and_the_others_answer(make_repo, pg_db, silent):
    web = make_repo(WEB, name="web")
    billing = make_repo({**BILLING, ".repolens.toml": f'[store]\nurl = "{pg_db.url}"\n'}, name="billing")
    hung = make_repo({**WEB, ".repolens.toml": f'[store]\nurl = "{silent.url}"\n'}, name="hung")
    for root in (web, billing):
        service.index_repo(root)
    targets = [Target("web", web), Target("billing", billing), Target("hung", hung)]
    warm, _ = ask_across(QUESTION, targets[:2], Filters(), {})
    assert [a.error for a in warm] == ["", ""]

    answers, _ = ask_across(QUESTION, targets, Filters(), {}, timeout=2.0)
    assert {a.target.key: a.error for a in answers} == {
        "web": "",
        "billing": "",
        "hung": "no answer within 2 s",
    }
    assert silent.accepted.is_set()  # it was asked, and hung
    merged, _ = merge_answers(QUESTION, answers, Filters())
    assert "hung did not answer: no answer within 2 s" in merged.notes
    assert {hit.chunk.path.split(":")[0] for hit in merged.hits} == {"web", "billing"}


def test_a_server_that_never_answers_holds_up_no_other_store(pg_db, silent):
    """While one thread waits on a server that never answers, another store's
    first connection is made: no lock is held while connecting."""
    failed: list[BaseException] = []

    def connect_to_the_silent_one() -> None:
        try:
            pool_for(silent.url)
        except StoreUnavailableError as exc:
            failed.append(exc)

    waiting = threading.Thread(target=connect_to_the_silent_one)
    waiting.start()
    try:
        assert silent.accepted.wait(60)
        with pooled(pg_db.url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert waiting.is_alive()  # still connecting to the silent one (for up to CONNECT_TIMEOUT_S)
    finally:
        waiting.join()
    assert len(failed) == 1 and "is unavailable" in str(failed[0])


def test_a_thread_keeps_the_readers_it_used_last_and_closes_the_others(make_repo, tmp_path: Path):
    root = make_repo(WEB)
    stores = []
    for i in range(3):
        service.index_repo(root, index_dir=tmp_path / f"index-{i}")
        stores.append(open_store(root, tmp_path / f"index-{i}"))
    cache = ReaderCache(per_thread=2)
    try:
        first, second = cache.get(stores[0]), cache.get(stores[1])
        assert cache.get(stores[0]) is first  # used again: the second is now the one used longest ago
        third = cache.get(stores[2])
        assert cache.get(stores[0]) is first and cache.get(stores[2]) is third
        with pytest.raises(sqlite3.ProgrammingError):  # closed
            second.meta()
        assert cache.get(stores[1]) is not second  # opened anew
    finally:
        cache.clear()


def test_a_database_that_is_down_is_said_so_not_taken_for_an_unknown_query_id(make_repo):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]  # closed below: nothing listens there
    store = PgStore(make_repo(WEB), f"postgresql://repolens@127.0.0.1:{port}/gone", "gone")
    with pytest.raises(StoreUnavailableError, match=r"PostgreSQL store .* is unavailable"):
        store.recall("0123456789")


def test_a_replica_that_is_down_is_passed_over_for_the_primary(make_repo, pg_db):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    replica = f"postgresql://repolens@127.0.0.1:{port}/gone"
    store = PgStore(make_repo(WEB), pg_db.url, "web", (replica,))
    assert store.read_url == pg_db.url
