"""The learned ranking's data as bench.train_ranker reads it: extracted candidates, and the packet they make.

:class:`Data` reads one data file (``extract`` or ``combine``'s), a column
found by its name among the stored features and extras; :func:`combine`
joins several; :func:`cited` and :func:`metrics` score an order of the
candidates as a packet cites them (the figures of ``cv`` and ``compare``),
:func:`slices` and :func:`render` say them per kind, input and language.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter

import numpy as np

from repolens.search.features import FEATURES

HITS = 5  # a packet's hits (top_k)
CITED = 10  # files a packet names in all (cite_files)
DIVERSITY = 0.8  # the packet's spread over files (the diversity setting)


def source_pairs(source) -> list[tuple[str, str]]:
    """A data file's ``source`` as (question file, digest) pairs."""
    flat = list(source)
    return list(zip(flat[0::2], flat[1::2], strict=True))


def combine(args: argparse.Namespace) -> None:
    """One data file from several extractions: of the same questions on
    lexical indexes and on indexes with vectors (turning vectors on must not
    make the model worse, so it sees both), or of other question files (the
    mined meaning set)."""
    parts = [np.load(path, allow_pickle=True) for path in args.inputs.split(",")]
    if (
        len({tuple(z["features"]) for z in parts}) != 1
        or len({tuple(z["extra_features"]) for z in parts}) != 1
    ):
        sys.exit("the extractions are of other features: extract them again")
    groups, offset = [], 0
    for z in parts:
        for g in (json.loads(g) for g in z["groups"]):
            groups.append(json.dumps({**g, "start": g["start"] + offset}))
        offset += len(z["rows"])
    made = [json.loads(z["made"][0]) for z in parts]
    np.savez_compressed(
        args.data,
        **{
            key: np.concatenate([z[key] for z in parts])
            for key in ("rows", "extra", "labels", "spans", "paths")
        },
        features=parts[0]["features"],
        extra_features=parts[0]["extra_features"],
        groups=np.asarray(groups, dtype=object),
        # (file, digest) pairs: the question files the rows came from, each once
        source=np.asarray(
            list(dict.fromkeys(x for z in parts for x in source_pairs(z["source"]))), dtype=object
        ).ravel(),
        # the first extraction's code and settings, and each extraction's (one ran with vectors)
        made=np.asarray(
            [json.dumps({**made[0], "extractions": made} if len(made) > 1 else made[0])], dtype=object
        ),
    )
    print(
        f"wrote {args.data}: {len(groups)} groups, {offset} rows from {len(parts)} extractions",
        file=sys.stderr,
    )


class Data:
    """The extracted candidates: rows of ``names`` (FEATURES, then the
    :data:`EXTRA` columns asked for with ``extra``), labels, spans, paths and
    the question groups. A column is found by its name among the stored
    features and extras, so data extracted while a feature was an extra
    serves once the engine computes it."""

    def __init__(self, path: str, extra: tuple[str, ...] = ()) -> None:
        z = np.load(path, allow_pickle=True)
        stored = tuple(z["features"]) + (tuple(z["extra_features"]) if "extra_features" in z else ())
        wanted = FEATURES + tuple(name for name in extra if name not in FEATURES)
        if missing := [name for name in wanted if name not in stored]:
            sys.exit(f"the data holds no {', '.join(missing)}: extract again (features changed)")
        matrix = np.hstack([z["rows"], z["extra"]]) if "extra" in z and z["extra"].size else z["rows"]
        self.names = wanted
        # this repolens's column order: a feature measured as an extra before the engine had it reads alike
        self.rows = matrix[:, [stored.index(name) for name in wanted]]
        self.labels = z["labels"]
        self.spans = z["spans"]
        self.paths = z["paths"]
        self.groups = [json.loads(g) for g in z["groups"]]
        self.source = tuple(z["source"])
        self.made = json.loads(z["made"][0]) if "made" in z else {}

    def group_slice(self, g: dict) -> slice:
        return slice(g["start"], g["start"] + g["size"])

    def without(self, names: set[str]) -> Data:
        """The same data without the columns ``names`` (an ablation)."""
        keep = [i for i, name in enumerate(self.names) if name not in names]
        other = object.__new__(Data)
        other.__dict__.update(self.__dict__)
        other.names = tuple(self.names[i] for i in keep)
        other.rows = self.rows[:, keep]
        return other


def cited(scores: np.ndarray, paths: np.ndarray, diversity: float = DIVERSITY) -> tuple[list[int], list[str]]:
    """What a packet would cite for candidates scored ``scores``: the indexes
    of its hits (spread over files as ``diversify`` does, each further hit of
    a file counting ``diversity`` times less) and its files in order (the
    hits', then the next files as pointers)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    positive = [math.exp(min(50.0, float(scores[i] - scores[order[0]]))) for i in range(len(scores))]
    seen: Counter[str] = Counter()
    picked: list[int] = []
    left = list(order)
    while left and len(picked) < HITS:
        best = max(left, key=lambda i: positive[i] * diversity ** seen[paths[i]])
        picked.append(best)
        seen[paths[best]] += 1
        left.remove(best)
    files = list(dict.fromkeys(paths[i] for i in picked))
    for i in order:
        if len(files) >= CITED:
            break
        if paths[i] not in files:
            files.append(paths[i])
    return picked, files


def metrics(data: Data, groups: list[dict], scores_of, diversity: float = DIVERSITY) -> dict[str, float]:
    """File Acc@1 and Acc@5, Line@5 (a hit overlaps a changed line) and
    Func@5 (every changed function overlaps a hit; over the questions that
    have one) of the packets ``scores_of`` makes, as bench.devset scores them
    (the hits spread over files by ``diversity``)."""
    acc1 = acc5 = line5 = func5 = with_functions = 0
    for g in groups:
        sl = data.group_slice(g)
        picked, files = cited(scores_of(g, sl), data.paths[sl], diversity)
        gold = set(g["gold_files"])
        acc1 += bool(files) and gold <= set(files[:1])
        acc5 += gold <= set(files[:5])
        labels = data.labels[sl]
        line5 += any(labels[i] == 3 for i in picked)
        wanted = {(f["path"], f["start_line"], f["end_line"]) for f in g.get("gold_functions", ())}
        if wanted:
            with_functions += 1
            paths, spans = data.paths[sl], data.spans[sl]
            func5 += all(
                any(paths[i] == p and spans[i][0] <= b and a <= spans[i][1] for i in picked)
                for p, a, b in wanted
            )
    n = max(len(groups), 1)
    return {
        "n": len(groups),
        "acc1": acc1 / n,
        "acc5": acc5 / n,
        "line5": line5 / n,
        "func5": func5 / max(with_functions, 1),
    }


def tuned_scores(data: Data):
    col = data.names.index("tuned_score")
    return lambda g, sl: data.rows[sl, col].astype(float)


def slices(data: Data) -> dict[str, list[dict]]:
    """The groups reported on: all, and per kind, input and language; the
    questions asked with vectors, and the same asked without."""
    out = {"all": data.groups}
    for field in ("set", "input", "language"):
        for value in sorted({g[field] for g in data.groups}):
            out[f"{field}={value}"] = [g for g in data.groups if g[field] == value]
    with_vectors = [g for g in data.groups if g.get("vectors")]
    if with_vectors:  # the same questions asked of the same snapshots without vectors, beside them
        asked = {(g["id"], g["input"]) for g in with_vectors}
        out["vectors=yes"] = with_vectors
        out["vectors=no"] = [
            g for g in data.groups if not g.get("vectors") and (g["id"], g["input"]) in asked
        ]
    return out


def render(report: dict) -> str:
    """The report of :func:`cross_validate` (or :func:`compare`): per slice,
    each metric for each ranking side by side."""
    systems = list(next(iter(report.values())))
    heads = [f"{metric} {system}" for metric in ("Acc@1", "Acc@5", "Line@5", "Func@5") for system in systems]
    lines = ["| slice | n | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(heads)]
    for name, r in report.items():
        cells = [f"{r[system][key]:.3f}" for key in ("acc1", "acc5", "line5", "func5") for system in systems]
        lines.append(f"| {name} | {r[systems[0]]['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
