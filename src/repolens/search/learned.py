"""The learned ranking: a model of gradient-boosted trees over :data:`~repolens.search.features.FEATURES`.

``ranking = "learned"`` orders a search's candidates by this model instead
of the tuned fusion's score (the tuned score is one of its features). The
model ships inside the package, ``search/data/ranker.json``, made by
``bench.train_ranker`` from questions mined from the history of other
repositories (``bench.mine_questions``); the file says how (its
``provenance``: repositories, commits, date, cross-validated figures).

The trees are evaluated in plain Python: numpy costs a new process more to
import (60-120 ms) than a whole search, and an agent may start one process
per question. The trees are flat lists (feature, threshold, left, right,
value per node; a leaf has feature -1), walked per candidate: ~1-2 ms for
100 candidates and a few hundred small trees.

``explain`` gives, for one candidate, the features that moved its score
most: each split on its path credits its feature with the change of the
expected value it caused (the "Saabas" attribution, from the mean values
the trees keep for their inner nodes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from repolens.errors import RepolensError
from repolens.search.features import FEATURES

MODEL_FILE = "ranker.json"
MODEL_FORMAT = 1


class Ranker:
    """A sum of trees over one row of features (see the module docstring)."""

    __slots__ = ("feature", "features", "left", "provenance", "right", "roots", "threshold", "value")

    def __init__(self, data: Mapping[str, Any]) -> None:
        if data.get("format") != MODEL_FORMAT:
            raise RepolensError(f"ranker model format {data.get('format')!r} is not {MODEL_FORMAT}")
        self.features: tuple[str, ...] = tuple(data["features"])
        nodes = data["nodes"]
        self.feature: list[int] = list(nodes["feature"])
        self.threshold: list[float] = [float(t) for t in nodes["threshold"]]
        self.left: list[int] = list(nodes["left"])
        self.right: list[int] = list(nodes["right"])
        self.value: list[float] = [float(v) for v in nodes["value"]]
        self.roots: list[int] = list(data["roots"])
        self.provenance: dict[str, Any] = dict(data.get("provenance", {}))

    def score_row(self, row: Sequence[float]) -> float:
        feature, threshold, left, right, value = (
            self.feature,
            self.threshold,
            self.left,
            self.right,
            self.value,
        )
        total = 0.0
        for node in self.roots:
            f = feature[node]
            while f >= 0:
                node = left[node] if row[f] <= threshold[node] else right[node]
                f = feature[node]
            total += value[node]
        return total

    def score(self, rows: Mapping[int, Sequence[float]]) -> dict[int, float]:
        """The model's score of each row, by cid (higher is better)."""
        return {cid: self.score_row(row) for cid, row in rows.items()}

    def explain(self, row: Sequence[float], top: int = 3) -> list[tuple[str, float]]:
        """The ``top`` features whose splits moved this row's score most, with
        how much (signed), strongest first."""
        moved: dict[int, float] = {}
        for f, node, nxt in self._splits(row):
            moved[f] = moved.get(f, 0.0) + self.value[nxt] - self.value[node]
        strongest = sorted(moved.items(), key=lambda kv: -abs(kv[1]))[:top]
        return [(self.features[f], delta) for f, delta in strongest if abs(delta) > 1e-9]

    def _splits(self, row: Sequence[float]) -> Iterator[tuple[int, int, int]]:
        """(feature, node, the child taken) of every split on ``row``'s path
        through each tree (:meth:`score_row` walks the same, inline, for speed)."""
        for root in self.roots:
            node = root
            while (f := self.feature[node]) >= 0:
                nxt = self.left[node] if row[f] <= self.threshold[node] else self.right[node]
                yield f, node, nxt
                node = nxt


def positive(scores: Mapping[int, float]) -> dict[int, float]:
    """Model scores made positive without changing their order (``exp`` of the
    margin to the best, so the best is 1): the spread over files multiplies
    scores, which only lowers a positive one."""
    best = max(scores.values(), default=0.0)
    return {cid: math.exp(s - best) for cid, s in scores.items()}


@lru_cache(maxsize=1)
def bundled_ranker() -> Ranker:
    """The model shipped with the package (read once per process); a
    ``RepolensError`` naming the fix when it is missing or was made for other
    features (a packaging mistake: ``ranking = "tuned"`` still works)."""
    try:
        # A path, not importlib.resources: that loads shutil and tempfile, which a search never needs.
        text = (Path(__file__).with_name("data") / MODEL_FILE).read_text(encoding="utf-8")
        ranker = Ranker(json.loads(text))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RepolensError(
            f"the learned ranking's model cannot be read ({type(exc).__name__}: {exc}): "
            'reinstall repolens, or set ranking = "tuned"'
        ) from None
    if ranker.features != FEATURES:
        raise RepolensError(
            "the learned ranking's model was made for other features than this repolens computes: "
            'rebuild it with bench.train_ranker, or set ranking = "tuned"'
        )
    return ranker
