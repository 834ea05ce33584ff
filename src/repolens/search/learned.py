"""The learned ranking: a model of gradient-boosted trees over :data:`~repolens.search.features.FEATURES`.

``ranking = "learned"`` orders a search's candidates by this model instead
of the tuned fusion's score (the tuned score is one of its features). The
model ships inside the package, ``search/data/ranker.json``, made by
``bench.train_ranker`` from questions mined from the history of other
repositories (``bench.mine_questions``); the file says how (its
``provenance``: repositories, commits, date, cross-validated figures).

The trees are evaluated in plain Python: numpy costs a new process more to
import (60-120 ms) than a whole search, and an agent may start one process
per question. The model file keeps them as flat lists (feature, threshold,
left, right, value per node; a leaf has feature -1), and :meth:`Ranker.walk` reads
them so, one candidate and one node at a time: the reference, which
``--explain`` and models made in tests use. The bundled model is also
written out as Python comparisons, ``search/_forest.py``
(:func:`forest_source`, written by ``python -m bench.train_ranker fit`` beside the
model file): one function scores all of a search's rows in one loop, each
tree a nest of ``if``/``else`` on local variables, about five times faster
than the walk (~0.5 ms for 100 candidates and 80 trees) and to the same bits
(each row's trees summed in the same order). Compiling that source at load
instead would cost a new process more than it saves (~15-50 ms); as a
module it is compiled once, at install, like the rest of the package, and
:func:`bundled_ranker` refuses it when it was made from another model file.

``explain`` gives, for one candidate, the features that moved its score
most: each split on its path credits its feature with the change of the
expected value it caused (the "Saabas" attribution, from the mean values
the trees keep for their inner nodes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from repolens.errors import RepolensError
from repolens.hashing import blake2b
from repolens.search.features import FEATURES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODEL_FILE = "ranker.json"
MODEL_FORMAT = 1
# The bundled model's trees as Python (:func:`forest_source`), beside this module.
FOREST_MODULE = "_forest.py"

Scorer = Callable[[Iterable[Sequence[float]]], list[float]]


class Ranker:
    """A sum of trees over rows of features (see the module docstring).
    ``compiled``: the same trees as :func:`forest_source` writes them (the
    bundled model's), else every row is walked."""

    __slots__ = (
        "compiled",
        "feature",
        "features",
        "left",
        "provenance",
        "right",
        "roots",
        "threshold",
        "value",
    )

    def __init__(self, data: Mapping[str, Any], compiled: Scorer | None = None) -> None:
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
        self.compiled = compiled

    def walk(self, row: Sequence[float]) -> float:
        """``row``'s score, each tree walked node by node and the leaves
        added in the trees' order: the reference every faster evaluation
        must equal to the bit."""
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

    def score_rows(self, rows: Iterable[Sequence[float]]) -> list[float]:
        """The model's score of each row, in order (higher is better)."""
        if self.compiled is not None:
            return self.compiled(rows)
        return [self.walk(row) for row in rows]

    def score(self, rows: Mapping[int, Sequence[float]]) -> dict[int, float]:
        """The model's score of each row, by cid (higher is better)."""
        return dict(zip(rows, self.score_rows(rows.values()), strict=True))

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
        through each tree (:meth:`walk` walks the same, inline, for speed)."""
        for root in self.roots:
            node = root
            while (f := self.feature[node]) >= 0:
                nxt = self.left[node] if row[f] <= self.threshold[node] else self.right[node]
                yield f, node, nxt
                node = nxt


def model_digest(text: str) -> str:
    """What names a model file's text: :func:`forest_source` writes it into
    the module it makes, and :func:`bundled_ranker` compares the two."""
    return blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def forest_source(text: str) -> str:
    """The Python module that scores rows as the model file ``text`` does
    (:meth:`Ranker.walk`'s arithmetic: each tree's comparisons ``row[f] <=
    threshold``, its leaf added to a total that starts at 0.0, tree after
    tree): ``scores(rows) -> list[float]``, with the file's ``DIGEST`` and
    ``FEATURES``. Each row is unpacked into local variables once (``xF`` for
    a feature the trees split on), and each tree is a nest of ``if``/``else``."""
    data = json.loads(text)
    ranker = Ranker(data)
    used = {f for f in ranker.feature if f >= 0}
    lines = [
        '"""The bundled learned ranking\'s trees as Python comparisons (see repolens.search.learned).',
        "",
        "Written by repolens.search.learned.forest_source from data/ranker.json",
        "(python -m bench.train_ranker fit writes both): do not edit.",
        '"""',
        "",
        f'DIGEST = "{model_digest(text)}"',
        "FEATURES = (",
        *(f"    {json.dumps(name)}," for name in ranker.features),
        ")",
        "",
        "",
        "def scores(rows):",
        "    out = []",
        "    for (",
        *(f"        x{f}," if f in used else "        _," for f in range(len(ranker.features))),
        "    ) in rows:",
        "        t = 0.0",
    ]

    def emit(node: int, indent: str) -> None:
        f = ranker.feature[node]
        if f < 0:
            lines.append(f"{indent}t += {_literal(ranker.value[node])}")
            return
        lines.append(f"{indent}if x{f} <= {_literal(ranker.threshold[node])}:")
        emit(ranker.left[node], indent + "    ")
        lines.append(f"{indent}else:")
        emit(ranker.right[node], indent + "    ")

    for root in ranker.roots:
        emit(root, " " * 8)
    lines += ["        out.append(t)", "    return out", ""]
    return "\n".join(lines)


def _literal(x: float) -> str:
    """``x`` as Python source that reads back as the same float."""
    return repr(x) if math.isfinite(x) else f'float("{x}")'


def positive(scores: Mapping[int, float]) -> dict[int, float]:
    """Model scores made positive without changing their order (``exp`` of the
    margin to the best, so the best is 1): the spread over files multiplies
    scores, which only lowers a positive one."""
    best = max(scores.values(), default=0.0)
    return {cid: math.exp(s - best) for cid, s in scores.items()}


class _Bundled(Ranker):
    """The bundled model, scored by ``search/_forest.py``: its trees' lists
    (which only :meth:`Ranker.walk` and :meth:`Ranker.explain` read, for
    ``--explain``) are parsed from the model file when first asked for.
    Parsing them was ~6M instructions of a search in a new process, which
    scores with the compiled trees only."""

    __slots__ = ("_text",)

    def __init__(self, text: str, compiled: Scorer, features: tuple[str, ...]) -> None:
        self._text = text
        self.compiled = compiled
        self.features = features

    def __getattr__(self, name: str) -> Any:
        if name not in Ranker.__slots__ or name in ("compiled", "features"):
            raise AttributeError(name)
        Ranker.__init__(self, json.loads(self._text), self.compiled)
        return getattr(self, name)


@lru_cache(maxsize=1)
def bundled_ranker() -> Ranker:
    """The model shipped with the package (read once per process); a
    ``RepolensError`` naming the fix when it is missing or was made for other
    features (a packaging mistake: ``ranking = "tuned"`` still works).

    The model file is parsed only when its digest is not the one
    ``search/_forest.py`` was written from (to say which mistake it is):
    else the compiled trees are the file's, and their features its own."""
    try:
        # A path, not importlib.resources: that loads shutil and tempfile, which a search never needs.
        text = (Path(__file__).with_name("data") / MODEL_FILE).read_text(encoding="utf-8")
        from repolens.search import _forest

        if model_digest(text) == _forest.DIGEST and _forest.FEATURES == FEATURES:
            return _Bundled(text, _forest.scores, FEATURES)
        ranker = Ranker(json.loads(text), _forest.scores)
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        raise RepolensError(
            f"the learned ranking's model cannot be read ({type(exc).__name__}: {exc}): "
            'reinstall repolens, or set ranking = "tuned"'
        ) from None
    if ranker.features != FEATURES:
        raise RepolensError(
            "the learned ranking's model was made for other features than this repolens computes: "
            'rebuild it with bench.train_ranker, or set ranking = "tuned"'
        )
    raise RepolensError(
        f"the learned ranking's {FOREST_MODULE} was written from another model file than {MODEL_FILE}: "
        'write it again with python -m bench.train_ranker forest, or set ranking = "tuned"'
    )
