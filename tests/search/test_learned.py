"""The learned ranking: features from what the legs return (the same on every
store), a model that loads and ranks, and what it is for: a bare name finds
its definition where the history and the text favour a file that uses it."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import Git, MakeRepo, commit_files
from repolens import service
from repolens.search import learned
from repolens.search.features import FEATURES, feature_index
from repolens.search.filters import Filters
from repolens.search.learned import FOREST_MODULE, MODEL_FILE, Ranker, bundled_ranker, forest_source, positive
from repolens.search.query import parse_query
from repolens.search.ranking import RankingOptions, search, search_index
from repolens.settings import Settings, load_settings
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools


@pytest.fixture(autouse=True)
def _fresh_readers():
    yield
    readers.clear()
    close_pools()


NAME = "parse_window_frames"


def _definition_file() -> str:
    """One definition of NAME, long, that names it once."""
    steps = "".join(f"    step_{i} = width * {i}  # arithmetic of the window\n" for i in range(40))
    return (
        '"""Frame decoding."""\n\n\n'
        f"def {NAME}(raw, width):\n"
        '    """Split a raw buffer into frames of one window each."""\n'
        f"    frames = []\n{steps}"
        "    for start in range(0, len(raw), width):\n"
        "        frames.append(raw[start : start + width])\n"
        "    return frames\n"
    )


def _user_file() -> str:
    """Six long functions that each use NAME many times."""
    out = f"from frames.decode import {NAME}\n\n\n"
    for i in range(6):
        calls = "".join(f"    value_{j} = {NAME}(raw, {j + 2})\n" for j in range(34))
        out += f"def play_{i}(raw):\n    # {NAME} splits the raw buffer, then {NAME} again\n{calls}"
        out += "    return value_0\n\n\n"
    return out


@pytest.fixture
def frames_repo(make_repo: MakeRepo, git: Git) -> Path:
    """NAME defined once; a file that uses it everywhere, and whose commits name it."""
    root = make_repo({"src/frames/decode.py": _definition_file(), "src/player/stream.py": _user_file()})
    for i in range(4):
        commit_files(
            git,
            root,
            f"{NAME}: call it from the stream player ({i})",
            {"src/player/stream.py": _user_file() + f"# {i}\n"},
        )
    return root


def _files(root: Path, question: str) -> list[str]:
    return [f.path for f in service.search_code(question, root, mode="files").files]


def test_a_bare_name_finds_its_definition_where_history_and_text_favour_a_user(frames_repo, monkeypatch):
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")
    assert _files(frames_repo, NAME)[0] == "src/player/stream.py"  # the case the tuned levers lose
    monkeypatch.setenv("REPOLENS_RANKING", "learned")
    assert _files(frames_repo, NAME)[0] == "src/frames/decode.py"
    monkeypatch.delenv("REPOLENS_RANKING")
    assert load_settings(frames_repo).ranking == "learned"  # the default
    assert _files(frames_repo, NAME)[0] == "src/frames/decode.py"


def test_explain_names_the_features_that_moved_a_hit(frames_repo):
    text = service.search_code(NAME, frames_repo, explain=True).text
    first = text.splitlines()[1]
    assert first.startswith("explain: lexical #1 ")
    moved = first.split("-> learned ", 1)[1]
    # ``-> learned 4.99 (symbol_score +1.75, file_tuned_best +0.71, tuned_score +0.55) = 1``
    names = [part.strip().split(" ")[0] for part in moved.split("(", 1)[1].split(")")[0].split(",")]
    assert len(names) == 3 and set(names) <= set(FEATURES)


def test_the_learned_ranking_runs_every_leg_whatever_the_tuned_weights_say(frames_repo):
    """``symbol_boost``, ``path_boost`` and ``history_weight`` weigh the tuned
    fusion: at 0 they leave a leg out of a tuned ranking, never out of the
    learned one, whose model reads every leg's features."""
    service.index_repo(frames_repo)
    reader = readers.get(open_store(frames_repo))
    question = f"{NAME} in src/frames/decode.py"  # a definition, a file, the words of commits

    def legs_run(**given: object) -> set[str]:
        outcome = search(reader, frames_repo, question, replace(Settings(), **given), Filters())
        return set().union(*(hit.legs for hit in outcome.hits))

    off = {"symbol_boost": 0.0, "path_boost": 0.0, "history_weight": 0.0}
    assert legs_run(ranking="tuned") == {"lexical", "symbol", "path", "history"}
    assert legs_run(ranking="tuned", **off) == {"lexical"}
    assert legs_run(ranking="learned", **off) == {"lexical", "symbol", "path", "history"}


def _rows(store, root: Path) -> dict[tuple[str, int], list[float]]:
    """Each hit's row of features for one question, on ``store``."""
    service.build_index(root, store=store)
    reader = store.open_reader()
    try:
        found: dict[int, list[float]] = {}
        outcome = search_index(
            reader,
            parse_query(f"where does {NAME} split the raw buffer"),
            options=RankingOptions.from_settings(load_settings(root)),
            features_out=found,
        )
        return {(h.chunk.path, h.chunk.start_line): found[h.cid] for h in outcome.hits}
    finally:
        reader.close()


def test_features_are_the_same_on_both_stores(frames_repo: Path, tmp_path: Path, pg_db):
    local = _rows(open_store(frames_repo, tmp_path / "index"), frames_repo)
    postgres = _rows(open_store(frames_repo, url=pg_db.url), frames_repo)
    assert local.keys() == postgres.keys()
    differ = {  # BM25 in 32 bits (tantivy) and in 64 (PostgreSQL): equal to 7 digits
        (spot, name): (a, b)
        for spot, row in local.items()
        for name, a, b in zip(FEATURES, row, postgres[spot], strict=True)
        if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    }
    assert differ == {}
    assert len(local) > 5 and all(len(row) == len(FEATURES) for row in local.values())
    definition = local["src/frames/decode.py", 4]  # the def (lines 1-3: the module docstring)
    assert [definition[feature_index(n)] for n in ("symbol_score", "role_source", "kind_primary")] == [
        1,
        1,
        1,
    ]


def _tiny_model() -> dict:
    """Two trees on ``symbol_score`` and ``role_test``: +2 for a definition
    the question names, -1 for a test file."""
    sym, test = feature_index("symbol_score"), feature_index("role_test")
    return {
        "format": 1,
        "features": list(FEATURES),
        "roots": [0, 3],
        "nodes": {
            "feature": [sym, -1, -1, test, -1, -1],
            "threshold": [0.5, 0, 0, 0.5, 0, 0],
            "left": [1, -1, -1, 4, -1, -1],
            "right": [2, -1, -1, 5, -1, -1],
            "value": [0.5, 0.0, 2.0, -0.2, 0.0, -1.0],
        },
    }


def test_a_model_file_is_loaded_and_ranks_rows():
    model = Ranker(_tiny_model())
    row = [0.0] * len(FEATURES)
    named = list(row)
    named[feature_index("symbol_score")] = 1.0
    in_test = list(named)
    in_test[feature_index("role_test")] = 1.0
    scores = model.score({1: row, 2: named, 3: in_test})
    assert scores == {1: 0.0, 2: 2.0, 3: 1.0}
    assert positive(scores) == {1: math.exp(-2.0), 2: 1.0, 3: math.exp(-1.0)}
    assert model.explain(in_test) == [("symbol_score", 1.5), ("role_test", -0.8)]


def test_the_shipped_model_says_how_it_was_made():
    ranker = bundled_ranker()
    assert ranker.features == FEATURES
    made = ranker.provenance
    assert made["made_by"].startswith("python -m bench.train_ranker")
    assert made["extracted_with"]["code"] and made["extracted_with"]["settings"]["ranking"] == "tuned"
    assert len(made["repositories"]) >= 20 and made["groups"] >= 3000
    assert {"commits", "subjects", "identifiers", "issues"} <= set(made["kinds"])
    assert set(made["snapshots"]) == set(made["repositories"])  # each repository's commits asked
    assert all(len(c) == 40 for commits in made["snapshots"].values() for c in commits)
    assert all(len(q["digest"]) == 16 for q in made["questions"])
    assert made["cross_validated"]["all"]["learned"]["acc5"] > made["cross_validated"]["all"]["tuned"]["acc5"]
    path = Path(__file__).parents[2] / "src" / "repolens" / "search" / "data" / MODEL_FILE
    assert path.stat().st_size < 1_000_000
    assert json.loads(path.read_text())["format"] == 1


def _rows_at_the_splits(ranker: Ranker, count: int, seed: int) -> list[list[float]]:
    """Rows whose values sit on, just below and just above the thresholds
    the trees split at (where ``<=`` decides), and between them."""
    rng = random.Random(seed)
    at: dict[int, list[float]] = {f: [0.0, 1.0] for f in range(len(ranker.features))}
    for f, t in zip(ranker.feature, ranker.threshold, strict=True):
        if f >= 0:
            at[f] += [t, math.nextafter(t, -math.inf), math.nextafter(t, math.inf), t + rng.uniform(-1, 1)]
    return [[rng.choice(at[f]) for f in range(len(ranker.features))] for _ in range(count)]


def test_the_bundled_trees_score_every_row_as_walking_them_does_to_the_bit():
    ranker = bundled_ranker()
    assert ranker.compiled is not None
    rows = _rows_at_the_splits(ranker, 5000, seed=36)
    assert ranker.score_rows(rows) == [ranker.walk(row) for row in rows]
    some = dict(enumerate(rows[:50]))
    assert ranker.score(some) == {i: ranker.walk(row) for i, row in some.items()}


def test_the_shipped_forest_is_written_from_the_shipped_model():
    folder = Path(learned.__file__).parent
    text = (folder / "data" / MODEL_FILE).read_text(encoding="utf-8")
    shipped = (folder / FOREST_MODULE).read_text(encoding="utf-8")
    assert shipped == forest_source(text), "write it again: python -m bench.train_ranker forest"


def test_forest_source_scores_any_model_as_its_walk():
    model = _tiny_model()
    model["nodes"]["threshold"][3] = math.inf  # every row goes left there
    text = json.dumps(model)
    space: dict = {}
    exec(compile(forest_source(text), FOREST_MODULE, "exec"), space)
    ranker = Ranker(json.loads(text))
    rows = _rows_at_the_splits(ranker, 200, seed=7)
    assert space["scores"](rows) == [ranker.walk(row) for row in rows]
    assert space["FEATURES"] == FEATURES and space["DIGEST"] == learned.model_digest(text)
    assert Ranker(json.loads(text), space["scores"]).score_rows(rows) == ranker.score_rows(rows)
