"""bench.train_ranker: the trees it exports score every row as LightGBM predicts it,
and its labels and metrics say what a packet would cite."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench.common.ranker_data import Data, metrics
from bench.train_ranker import _label, _train, export
from repolens.search.features import FEATURES
from repolens.search.learned import Ranker, forest_source

lightgbm = pytest.importorskip("lightgbm", reason="LightGBM (the train extra) is not installed")


def made_data(n_groups: int = 20, size: int = 50, seed: int = 7) -> Data:
    """``n_groups`` questions of ``size`` candidates each, features drawn at
    random (a share of them on a few repeated values, as rank features are),
    labels from a few features: a data file as extract writes it."""
    rng = np.random.default_rng(seed)
    rows = rng.random((n_groups * size, len(FEATURES))).astype(np.float32)
    rows[:, ::3] = np.round(rows[:, ::3] * 4) / 4  # values that repeat, and fall on split points
    score = rows[:, 1] + rows[:, 8] - rows[:, 20] + rng.normal(0, 0.2, len(rows))
    labels = np.digitize(score, [0.8, 1.2, 1.5]).astype(np.int8)
    data = object.__new__(Data)
    data.names = FEATURES
    data.rows, data.labels = rows, labels
    data.spans = np.asarray([(i, i + 9) for i in range(len(rows))], dtype=np.int32)
    data.paths = np.asarray([f"f{i % 7}.py" for i in range(len(rows))], dtype=object)
    data.groups = [
        {"id": f"q{g}", "repo": f"r{g % 4}", "set": "issues", "input": "query", "language": "python",
         "gold_files": ["f1.py"], "gold_ranges": [], "gold_functions": [], "start": g * size, "size": size}
        for g in range(n_groups)
    ]  # fmt: skip
    data.source, data.made = ("questions.json", "0123456789abcdef"), {}
    return data


def test_the_exported_trees_score_a_thousand_rows_as_lightgbm_predicts():
    data = made_data()
    assert len(data.rows) == 1000
    booster = _train(data, data.groups)
    text = json.dumps(export(booster, data, None))  # as the model file is written and read back
    namespace: dict = {}
    exec(compile(forest_source(text), "_forest.py", "exec"), namespace)  # the module a search evaluates
    model = Ranker(json.loads(text), namespace["scores"])
    rows = [[float(v) for v in row] for row in data.rows]
    want = booster.predict(data.rows)
    walked = np.asarray([model.walk(row) for row in rows])
    assert np.abs(walked - want).max() < 1e-9
    assert model.score_rows(rows) == list(walked)  # the compiled forest: the walk's bits
    assert len(set(np.round(want, 6))) > 100  # a model that ranks, not a constant


def test_the_provenance_names_the_questions_their_repositories_and_snapshots():
    data = made_data(n_groups=8, size=50)
    for g in data.groups:
        g["commit"] = f"{int(g['id'][1:]) % 2:040d}"  # two snapshots per repository
    made = export(_train(data, data.groups), data, None)["provenance"]
    assert made["questions"] == [{"file": "questions.json", "digest": "0123456789abcdef"}]
    assert made["repositories"] == {"r0": 2, "r1": 2, "r2": 2, "r3": 2}
    assert made["snapshots"] == {
        "r0": ["0" * 40],
        "r1": ["0" * 39 + "1"],
        "r2": ["0" * 40],
        "r3": ["0" * 39 + "1"],
    }
    assert "/" not in json.dumps(made["questions"])  # file names, no machine's paths


def test_labels_say_changed_line_changed_function_file_or_other():
    q = {
        "gold_files": ["a.py"],
        "gold_ranges": [{"path": "a.py", "start_line": 10, "end_line": 12}],
        "gold_functions": [{"path": "a.py", "start_line": 5, "end_line": 30}],
    }
    assert [_label("a.py", 11, 40, q), _label("a.py", 20, 25, q), _label("a.py", 40, 50, q)] == [3, 2, 1]
    assert _label("b.py", 11, 12, q) == 0


def test_metrics_read_the_packet_a_model_would_make():
    data = made_data(n_groups=1, size=6)
    data.paths = np.asarray(["a.py", "a.py", "b.py", "c.py", "d.py", "e.py"], dtype=object)
    data.spans = np.asarray([(1, 9), (10, 20), (1, 5), (1, 5), (1, 5), (1, 5)], dtype=np.int32)
    data.labels = np.asarray([1, 3, 0, 0, 0, 0], dtype=np.int8)
    group = {**data.groups[0], "gold_files": ["a.py"], "gold_functions": [{"path": "a.py", "start_line": 12,
             "end_line": 14}]}  # fmt: skip
    # a.py's second chunk (the changed line) close behind its first: the spread over files keeps it
    close = np.asarray([6.0, 5.9, 5.0, 4.0, 3.0, 2.0])
    assert metrics(data, [group], lambda g, sl: close) == {"n": 1, "acc1": 1.0, "acc5": 1.0, "line5": 1.0,
                                                           "func5": 1.0}  # fmt: skip
    # far behind: five other files' chunks are cited first, the file is right and the lines are not
    far = np.asarray([6.0, -9.0, 5.0, 4.0, 3.0, 2.0])
    assert metrics(data, [group], lambda g, sl: far) == {"n": 1, "acc1": 1.0, "acc5": 1.0, "line5": 0.0,
                                                         "func5": 0.0}  # fmt: skip
    # a.py's second chunk third by score: a hit at the default spread and with none, not when
    # every further chunk of a file counts a hundred times less
    mid = np.asarray([6.0, 4.5, 5.0, 4.0, 3.0, 2.0])
    assert [metrics(data, [group], lambda g, sl: mid, diversity=d)["line5"] for d in (1.0, 0.8, 0.01)] == [
        1.0,
        1.0,
        0.0,
    ]
