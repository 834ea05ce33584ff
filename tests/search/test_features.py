"""The learned ranking's features, computed as columns for all candidates at once,
are the rows the straightforward reference computes one candidate at a time
(``features_reference.py``), to the bit: on made-up searches that reach every
branch (ties, legs missing, negative similarities, text that is not ASCII),
and on the development questions against their real checkouts when those
are at hand."""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from pathlib import Path

import pytest
from features_reference import reference_features

from repolens import service
from repolens.chunking import Chunk
from repolens.search import features
from repolens.search.features import candidate_features, held_terms
from repolens.search.history_leg import FileVote, HistoryVotes, SimilarCommit
from repolens.search.learned import bundled_ranker
from repolens.search.query import parse_query
from repolens.store.handles import readers
from repolens.store.records import HistoryCommit

WORDS = (
    "parse_url",
    "parseURL",
    "ParseUrl",
    "session",
    "SessionStore",
    "expire",
    "expired",
    "expires",
    "handle_submit",
    "handleSubmit",
    "form",
    "forms",
    "store",
    "saving",
    "saved",
    "request",
    "requests",
    "response",
    "cookie",
    "signed",
    "sign",
    "token",
    "tokens",
    "window",
    "frame",
    "frames",
    "raw",
    "buffer",
    "width",
    "walk",
    "walker",
    "ignore",
    "ignored",
    "größe",
    "straße",
    "ΑΣ",
    "naïve",
    "café",
    "x",
    "y",
    "i",
    "io",
    "url",
    "urls",
    "test",
    "tests",
    "testing",
    "config",
    "os.path",
    "self",
    "def",
    "class",
    "return",
    "import",
    "from",
    "fn",
    "struct",
    "impl",
)
PATHS = (
    "src/auth/session.py",
    "src/web/forms.py",
    "tests/test_session.py",
    "docs/guide.md",
    "src/walk.rs",
    "vendor/lib/x.js",
    "src/größe/straße.py",
    "README.md",
)
KINDS = ("function", "method", "class", "block", "section", "window", "constant", "module")


def _text(rng: random.Random, words: int) -> str:
    seps = (" ", " ", "_", ".", "(", "\n", "\n    ", ", ", "-", "::")
    return "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(words))


def _frames(rng: random.Random) -> str:
    """A traceback-shaped excerpt: Python frames (innermost last) or a JVM stack trace (innermost first)."""
    if rng.random() < 0.5:
        frames = "".join(
            f'  File "{rng.choice(PATHS)}", line {rng.randint(1, 400)}, in {rng.choice(WORDS)}\n'
            for _ in range(rng.randint(1, 3))
        )
        return f"Traceback (most recent call last):\n{frames}ValueError: {rng.choice(WORDS)}\n"
    at = "".join(f"\tat a.b.{rng.choice(WORDS)}(Store.java:{rng.randint(1, 400)})\n" for _ in range(2))
    return f"java.lang.IllegalStateException\n{at}"


def _search(rng: random.Random):
    """One made-up search: its question, candidates, legs, tuned scores,
    priors and the history's votes."""
    question = _text(rng, rng.choice((1, 3, 12, 40)))
    if rng.random() < 0.3:
        question = f"{rng.choice(WORDS)}\n\n{question}\n```\n{_text(rng, 8)}\n```"
    if rng.random() < 0.3:
        question += f"\n{rng.choice(WORDS)}({rng.choice(WORDS)})\n{_frames(rng)}"
    query = parse_query(question)
    n = rng.randint(1, 60)
    chunks = {}
    for cid in range(n):
        start = rng.randint(1, 400)
        kind = rng.choice(KINDS)
        name = rng.choice(("", *WORDS))
        chunks[cid] = Chunk(
            path=rng.choice(PATHS),
            start_line=start,
            end_line=start + rng.randint(0, 80),
            text=_text(rng, rng.randint(1, 300)),
            language="python",
            kind=kind,
            name=name,
            qualname=name,
            signature=rng.choice(("", f"def {name}({_text(rng, 2)})")),
            doc=rng.choice(("", "", _text(rng, rng.randint(1, 12)))),
            kinds=tuple(rng.sample(KINDS, rng.randint(0, 2))),
        )
    legs = {}
    for leg in ("lexical", "symbol", "dense", "path", "history"):
        if rng.random() < 0.25:
            continue
        members = rng.sample(range(n + 10), rng.randint(0, n))  # cids past n: filtered out later
        levels = [rng.choice((0.5, 1.0, 2.5)) for _ in range(3)]  # a few values: equal scores
        low = -1.0 if leg == "dense" else 0.0
        scored = {cid: rng.choice([*levels, rng.uniform(low, 9.0)]) for cid in members}
        ordered = sorted(scored.items(), key=lambda kv: -kv[1])
        legs[leg] = {cid: (rank, s) for rank, (cid, s) in enumerate(ordered, 1)}
    tuned = {cid: rng.choice((1.0, 2.0, rng.uniform(0.0, 20.0))) for cid in rng.sample(range(n), n)}
    if rng.random() < 0.05:
        tuned = dict.fromkeys(tuned, 0.0)
    priors = {cid: rng.choice((0.5, 0.8, 1.0)) for cid in tuned if rng.random() < 0.7}
    votes = None
    if rng.random() < 0.5:
        voted = {}
        for path in rng.sample(PATHS, rng.randint(0, 4)):
            commits = tuple(
                SimilarCommit(
                    HistoryCommit(k, f"{k:040x}", 0, _text(rng, 6), (path,)), 1.0, rng.choice((0.2, 0.7))
                )
                for k in range(rng.randint(1, 3))
            )
            voted[path] = FileVote(rng.choice((0.5, 1.0)), commits)
        votes = HistoryVotes(voted)
    return query, chunks, legs, tuned, priors, votes


def test_the_columns_are_the_reference_rows_on_made_up_searches():
    rng = random.Random(36)
    ranker = bundled_ranker()
    rows_seen = 0
    for _ in range(400):
        query, chunks, legs, tuned, priors, votes = _search(rng)
        rows = candidate_features(query, chunks, legs, tuned, priors, votes)
        reference = reference_features(query, chunks, legs, tuned, priors, votes)
        assert list(rows) == list(reference)
        assert {cid: list(row) for cid, row in rows.items()} == reference
        assert ranker.score(rows) == {cid: ranker.walk(row) for cid, row in reference.items()}
        rows_seen += len(rows)
    assert rows_seen > 5000


def test_held_terms_are_the_terms_inside_each_text_ignoring_case():
    texts = ["Parse_URL(request)", "nothing here", "Größe straße", "ΑΣ.Β ΑΣ", "requestest", ""]
    terms = ["pars", "url", "request", "test", "straß", "größe", "ασ", "ας", "est", "zz"]
    held = held_terms(texts, terms)
    assert held == [frozenset(t for t in terms if t in text.lower()) for text in texts]
    assert held[0] == {"pars", "url", "request", "est"} and held[4] == {"request", "test", "est"}
    assert held_terms(texts, []) == [frozenset()] * len(texts)


# -- the development questions ---------------------------------------------------------

# Small repositories, so that indexing their checkouts takes seconds.
SMALL = ("sharkdp/fd", "spf13/cobra", "psf/requests", "pallets/flask", "google/gson", "honojs/hono")
CHECKOUTS_AT_MOST = 10


def _questions_folder() -> Path | None:
    """``shared/bench`` beside the repository or one of the folders above it."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "bench" / "swebench-dev.json").is_file():
            return parent / "shared" / "bench"
    return None


def _checkouts_folder() -> Path | None:
    """The history checkouts under ``$REPOLENS_BENCH_DATA``, else the plain ones."""
    data = os.environ.get("REPOLENS_BENCH_DATA")
    if not data:
        return None
    return next(
        (Path(data) / kind for kind in ("checkouts-git", "checkouts") if (Path(data) / kind).is_dir()), None
    )


def test_the_development_questions_rank_on_the_reference_features(tmp_path: Path, monkeypatch):
    questions_folder, checkouts = _questions_folder(), _checkouts_folder()
    if questions_folder is None or checkouts is None or not checkouts.is_dir():
        pytest.skip(
            "the development questions (shared/bench) or their checkouts ($REPOLENS_BENCH_DATA) are absent"
        )
    by_checkout: dict[str, list[dict]] = defaultdict(list)
    for name in ("swebench-dev.json", "commits-dev.json", "identifiers-dev.json"):
        for q in json.loads((questions_folder / name).read_text()):
            owner, repo = q["repo"].split("/")
            checkout = checkouts / f"{owner}__{repo}@{q['commit'][:12]}"
            if q["repo"] in SMALL and (checkout / ".checkout_ok").is_file():
                by_checkout[str(checkout)].append(q)
    chosen = sorted(by_checkout.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:CHECKOUTS_AT_MOST]
    if not chosen:
        pytest.skip(f"no checkout of {', '.join(SMALL)} in {checkouts}")

    ranker = bundled_ranker()
    compared: list[int] = []
    computed = features.candidate_features

    def both(query, chunks, legs, tuned, priors, votes=None):
        rows = computed(query, chunks, legs, tuned, priors, votes)
        reference = reference_features(query, chunks, legs, tuned, priors, votes)
        assert {cid: list(row) for cid, row in rows.items()} == reference, query.text[:80]
        assert ranker.score(rows) == {cid: ranker.walk(row) for cid, row in reference.items()}
        compared.append(len(rows))
        return rows

    monkeypatch.setattr(features, "candidate_features", both)
    try:
        for i, (checkout, qs) in enumerate(chosen):
            index_dir = tmp_path / f"index-{i}"
            service.build_index(checkout, index_dir=index_dir)
            for q in qs:
                for text in dict.fromkeys((q["query"], q["title"])):
                    service.search_code(text, checkout, index_dir=index_dir, auto_index=False)
    finally:
        readers.clear()
    assert len(compared) >= len(chosen) and sum(compared) > 20 * len(compared)
