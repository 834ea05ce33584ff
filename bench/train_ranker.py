"""Learn the ranking from mined questions: extract features, cross-validate, fit, export.

    python -m bench.train_ranker extract --questions Q.json --checkouts DIR --index-cache DIR --data D.npz
    python -m bench.train_ranker cv --data D.npz [--folds 5]
    python -m bench.train_ranker fit --data D.npz [--out src/repolens/search/data/ranker.json]
    python -m bench.train_ranker forest
    python -m bench.train_ranker all --questions ... --checkouts ... --index-cache ... --data D.npz

``extract`` asks every mined question of ``bench.mine_questions``'s set
(commit messages, their subjects alone, bare identifiers) against the index of its
snapshot, through the tuned ranking (``search_index`` with the default
settings), and keeps each candidate's row of
:data:`repolens.search.features.FEATURES` with its label: 2 when the chunk
overlaps a gold line range, 1 when it is in a gold file, else 0.

``cv`` trains LambdaMART (LightGBM, ``pip install 'repolens[train]'``) on
all repositories but a fold's and scores the fold's questions the way a
packet cites them (candidates ordered by the model, spread over files as the
packet spreads them, five hits, then the next files as pointers), against
the tuned order of the same candidates: file Acc@1, Acc@5, Line@5, overall,
per question kind and per language. A repository is never in a fold's
training and test at once.

``fit`` trains on everything and writes the model (the trees as flat lists,
:mod:`repolens.search.learned`) with its provenance: the questions'
repositories and snapshots, the date, the parameters, the cross-validated
figures of the last ``cv`` run on the same data. Fitting the bundled model
also writes its trees as Python comparisons, ``src/repolens/search/_forest.py``
(:func:`repolens.search.learned.forest_source`: what a search evaluates);
``forest`` writes that module again from the model file alone.

Training code and LightGBM stay out of repolens's run time: the model file
is evaluated in plain Python.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np

from bench.common.calibration import folds
from bench.common.devsets import (
    checkout_name,
    code_commit,
    ensure_index,
    identity_key,
    index_identity,
    settings_env,
)
from bench.common.graph_probe import GRAPH_FEATURES, graph_columns
from bench.common.paths import REPO_ROOT, data_default
from bench.common.ranker_data import (
    DIVERSITY,
    Data,
    combine,
    metrics,
    render,
    slices,
    source_pairs,
    tuned_scores,
)
from repolens.search.features import FEATURES
from repolens.search.learned import FOREST_MODULE, forest_source
from repolens.search.legs import dense_leg
from repolens.search.query import parse_query
from repolens.search.ranking import CANDIDATES, RankingOptions, search_index
from repolens.settings import Settings, load_settings
from repolens.store import open_store
from repolens.store.handles import readers

MODEL_OUT = REPO_ROOT / "src" / "repolens" / "search" / "data" / "ranker.json"
FOREST_OUT = REPO_ROOT / "src" / "repolens" / "search" / FOREST_MODULE
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [5],
    # labels (see _label): 0 elsewhere, 1 a gold file, 2 a changed function, 3 a changed line;
    # a changed function counts (0/1/1/3 -> 0/1/2/4: Line@5 +0.4 points cross-validated, compare)
    "label_gain": [0.0, 1.0, 2.0, 4.0],
    "num_leaves": 11,
    "min_data_in_leaf": 40,
    "learning_rate": 0.1,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambdarank_truncation_level": 20,
    "verbose": -1,
    "seed": 7,
    "deterministic": True,
    "num_threads": 2,
}
# With issue 37's 59 features, 120 trees of 11 leaves cross-validate above 80
# of 7 (Line@5 0.743 against 0.735, issues 0.658 against 0.649) and as 150 of
# 15 (0.742), at ~2.4x the nodes of 80 of 7 (docs/benchmarks.md): every
# search pays for them.
ROUNDS = 120


# -- extract ---------------------------------------------------------------------


def _inputs(q: dict) -> list[tuple[str, str]]:
    """(input name, text) of a question: its text (the mined set asks a
    commit's subject alone as a question of its own, set ``subjects``), and
    an issue's title too (an agent often pastes a report's title alone)."""
    if q["set"] == "issues" and q.get("title") and q["title"] != q["query"]:
        return [("query", q["query"]), ("title", q["title"])]
    return [("query", q["query"])]


def _label(path: str, start: int, end: int, q: dict) -> int:
    """3: the chunk overlaps a gold line range; 2: a changed function
    (``gold_functions``) but none of its changed lines; 1: a gold file; 0."""
    if path not in q["gold_files"]:
        return 0
    for g in q["gold_ranges"]:
        if g["path"] == path and start <= g["end_line"] and g["start_line"] <= end:
            return 3
    for g in q.get("gold_functions", ()):
        if g["path"] == path and start <= g["end_line"] and g["start_line"] <= end:
            return 2
    return 1


def extract(args: argparse.Namespace) -> None:
    questions = json.loads(Path(args.questions).read_text())
    if args.only:
        questions = [q for q in questions if re.search(args.only, q["id"])]
    if args.limit:
        questions = questions[: args.limit]
    by_checkout: dict[str, list[dict]] = defaultdict(list)
    for q in questions:
        if not args.snapshots or re.search(args.snapshots, checkout_name(q)):
            by_checkout[checkout_name(q)].append(q)
    rows: list[list[float]] = []
    extra: list[list[float]] = []
    labels: list[int] = []
    groups: list[dict] = []
    paths: list[str] = []
    spans: list[tuple[int, int]] = []
    started = time.monotonic()
    for n, (name, qs) in enumerate(sorted(by_checkout.items()), 1):
        root = Path(args.checkouts) / name
        settings = load_settings(root)
        identity = index_identity(settings, history=(root / ".git").exists())
        index_dir = Path(args.index_cache) / name / identity_key(identity)
        status = ensure_index(root, index_dir, identity, reindex=False)
        if not status.ok:
            print(f"[{n}/{len(by_checkout)}] {name}: index {status.state} {status.error}", file=sys.stderr)
            continue
        reader = readers.get(open_store(root, index_dir))
        # the features come with the tuned order (one of them), whatever ranking is the default
        options = RankingOptions.from_settings(settings)._replace(ranking="tuned")
        for q in qs:
            for inp, text in _inputs(q):
                found: dict[int, list[float]] = {}
                parsed = parse_query(text, weighted=settings.query_weights)
                dense, _ = dense_leg(root, reader, settings, parsed)  # None unless the index has vectors
                outcome = search_index(
                    reader,
                    parsed,
                    dense=dense,
                    limit=max(CANDIDATES, settings.top_k * 4),
                    options=options,
                    features_out=found,
                )
                chunks = {h.cid: h.chunk for h in outcome.hits}
                cids = [cid for cid in found if cid in chunks]
                if not cids:
                    continue
                groups.append(
                    {
                        "id": q["id"],
                        "input": inp,
                        "set": q["set"],
                        "repo": q["repo"],
                        "commit": q["commit"],  # the snapshot asked, named in the model's provenance
                        "language": q["language"],
                        "gold_files": q["gold_files"],
                        "gold_ranges": q["gold_ranges"],
                        "gold_functions": q.get("gold_functions", []),
                        "vectors": dense is not None,
                        "start": len(rows),
                        "size": len(cids),
                    }
                )
                rank = FEATURES.index("tuned_rank")
                order = sorted(cids, key=lambda cid: found[cid][rank])
                graph = graph_columns(reader, {cid: chunks[cid] for cid in cids}, order)
                extra += [graph[cid] for cid in cids]
                for cid in cids:
                    c = chunks[cid]
                    rows.append(found[cid])
                    labels.append(_label(c.path, c.start_line, c.end_line, q))
                    paths.append(c.path)
                    spans.append((c.start_line, c.end_line))
        readers.clear()
        print(
            f"[{n}/{len(by_checkout)}] {name}: {len(qs)} questions, {len(groups)} groups, "
            f"{len(rows)} rows, {time.monotonic() - started:.0f}s",
            file=sys.stderr,
            flush=True,
        )
    np.savez_compressed(
        args.out,
        rows=np.asarray(rows, dtype=np.float32),
        extra=np.asarray(extra, dtype=np.float32).reshape(len(rows), len(EXTRA)),
        extra_features=np.asarray(EXTRA, dtype=object),
        labels=np.asarray(labels, dtype=np.int8),
        spans=np.asarray(spans, dtype=np.int32),
        paths=np.asarray(paths, dtype=object),
        features=np.asarray(FEATURES, dtype=object),
        groups=np.asarray([json.dumps(g) for g in groups], dtype=object),
        source=np.asarray([Path(args.questions).name, _digest(Path(args.questions))], dtype=object),
        made=np.asarray([json.dumps(extracted_with(load_settings(None)))], dtype=object),
    )
    print(f"wrote {args.out}: {len(groups)} groups, {len(rows)} rows", file=sys.stderr)


# Features measured here before the engine computes them: their columns,
# stored beside FEATURES, which cv --with and compare +NAME add to a model's
# inputs: issue 39's graph features (bench.common.graph_probe); issue 37's
# were measured so, and are FEATURES since.
EXTRA: tuple[str, ...] = GRAPH_FEATURES


def extracted_with(settings: Settings) -> dict:
    """What the features were computed by, for the model's provenance: the
    code's commit and the settings the legs ran with (the repository
    defaults, ranked as tuned so that the tuned order is a feature)."""
    options = RankingOptions.from_settings(settings)._replace(ranking="tuned")
    return {
        "code": code_commit(),
        "settings": {
            **options._asdict(),
            "query_weights": settings.query_weights,
            "vectors": settings.vectors,
        },
        "candidates": max(CANDIDATES, settings.top_k * 4),
    }


def _digest(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()


# A share of the rows is extracted with vectors (the dense leg's features
# present): per repository, its snapshot of at least this many questions with
# the fewest files, when it has at most MAX_VECTOR_FILES (embedding costs
# 30-50x the lexical index: bench/README.md, "Training the learned ranking").
MIN_VECTOR_QUESTIONS = 15
MAX_VECTOR_FILES = 300


def vector_snapshots(questions: list[dict], checkouts: Path) -> list[str]:
    """The checkouts whose questions are also asked with vectors (see MIN_VECTOR_QUESTIONS)."""
    import subprocess

    per: Counter[str] = Counter(checkout_name(q) for q in questions)
    best: dict[str, tuple[int, str]] = {}
    for name, n in sorted(per.items()):
        if n < MIN_VECTOR_QUESTIONS:
            continue
        listed = subprocess.run(
            ["git", "-C", str(checkouts / name), "ls-files"], capture_output=True, text=True
        )
        files = len(listed.stdout.split())
        repo = name.split("@", 1)[0]
        if files <= MAX_VECTOR_FILES and (repo not in best or (files, name) < best[repo]):
            best[repo] = (files, name)
    return sorted(name for _, name in best.values())


def extract_all(args: argparse.Namespace) -> Path:
    """``all``'s data: the mined questions extracted on lexical indexes, the
    mined meaning set (``bench.meaning set``'s, in ``MINED/meaning``), the
    questions of :func:`vector_snapshots` again on indexes with vectors,
    combined into ``MINED/ranker-final.npz``."""
    mined = Path(args.mined)
    questions = mined / "questions.json"
    parts = [mined / "ranker-data.npz"]

    def step(q: Path, checkouts: Path, cache: Path, out: Path, snapshots: str | None = None) -> None:
        names = {**vars(args), "questions": str(q), "checkouts": str(checkouts), "index_cache": str(cache)}
        extract(argparse.Namespace(**{**names, "out": str(out), "snapshots": snapshots}))

    step(questions, mined / "checkouts", mined / "index-cache", parts[0])
    meaning = mined / "meaning"
    if (meaning / "meaning-dev.json").is_file():
        parts.append(mined / "ranker-meaning.npz")
        step(meaning / "meaning-dev.json", meaning / "checkouts", meaning / "index-cache", parts[-1])
    chosen = vector_snapshots(json.loads(questions.read_text()), mined / "checkouts")
    if chosen:
        parts.append(mined / "ranker-vectors.npz")
        with settings_env({"vectors": "1"}):
            pattern = "^(" + "|".join(re.escape(name) for name in chosen) + ")$"
            step(questions, mined / "checkouts", mined / "index-cache", parts[-1], pattern)
    final = mined / "ranker-final.npz"
    combine(argparse.Namespace(inputs=",".join(map(str, parts)), data=str(final)))
    return final


# -- training --------------------------------------------------------------------


def _train(data: Data, groups: list[dict], rounds: int | None = None, params: dict | None = None):
    import lightgbm as lgb

    idx = np.concatenate([np.arange(g["start"], g["start"] + g["size"]) for g in groups])
    train = lgb.Dataset(
        data.rows[idx],
        label=data.labels[idx],
        group=[g["size"] for g in groups],
        feature_name=list(data.names),
        free_raw_data=False,
    )
    return lgb.train(params or PARAMS, train, num_boost_round=rounds or ROUNDS)


def fold_scores(
    data: Data,
    k: int,
    params: dict | None = None,
    rounds: int | None = None,
    untrained: frozenset[str] = frozenset(),
) -> dict[int, np.ndarray]:
    """Each group's model scores, from a model trained on the other folds'
    repositories (a repository is never in a fold's training and test);
    questions of the kinds ``untrained`` are tested, never trained on."""
    model_scores: dict[int, np.ndarray] = {}
    for n, fold in enumerate(folds(data.groups, k), 1):
        train = [g for g in data.groups if g["repo"] not in fold and g["set"] not in untrained]
        test = [(i, g) for i, g in enumerate(data.groups) if g["repo"] in fold]
        booster = _train(data, train, rounds=rounds, params=params)
        for i, g in test:
            model_scores[i] = booster.predict(data.rows[data.group_slice(g)])
        print(
            f"fold {n}/{k}: {len(train)} train groups, {len(test)} test groups", file=sys.stderr, flush=True
        )
    return model_scores


def cross_validate(data: Data, k: int) -> dict:
    """Per fold: train on the other repositories, score this fold's questions."""
    model_scores = fold_scores(data, k)
    index = {id(g): i for i, g in enumerate(data.groups)}

    def learned(g, sl):
        return model_scores[index[id(g)]]

    tuned = tuned_scores(data)
    return {
        name: {"tuned": metrics(data, groups, tuned), "learned": metrics(data, groups, learned)}
        for name, groups in slices(data).items()
    }


class Variant(NamedTuple):
    """One model of a comparison: the EXTRA columns it adds, the columns it
    drops, the kinds of question left out of its training (never of its
    test), and its LightGBM parameters and rounds."""

    added: tuple[str, ...]
    dropped: frozenset[str]
    untrained: frozenset[str]
    params: dict
    rounds: int


def parse_variant(change: str) -> Variant:
    """``+a,-b,gains=0/1/2/4,leaves=15,rounds=150,nokind=issues`` (see :func:`compare`)."""
    parts = [c for c in change.split(",") if c]
    values = dict(c.split("=", 1) for c in parts if "=" in c)
    params = dict(PARAMS)
    if "gains" in values:
        params["label_gain"] = [float(g) for g in values["gains"].split("/")]
    if "leaves" in values:
        params["num_leaves"] = int(values["leaves"])
    return Variant(
        tuple(c[1:] for c in parts if c.startswith("+")),
        frozenset(c[1:] for c in parts if c.startswith("-")),
        frozenset(values.get("nokind", "").split("/")) - {""},
        params,
        int(values.get("rounds", ROUNDS)),
    )


def compare(args: argparse.Namespace) -> None:
    """Several models cross-validated on the same folds, the tuned order and
    (``--shipped``) the model shipped today beside them: ``--variant
    NAME:+a,-b,gains=0/1/2/4,leaves=15,rounds=150,nokind=issues/meaning``
    (+ an EXTRA column, - a column dropped, the label gains, the trees'
    leaves and number, kinds of question kept out of the training)."""
    variants = {}
    for spec in args.variant or ["base:"]:
        name, _, change = spec.partition(":")
        variants[name] = parse_variant(change)
    wanted = tuple(dict.fromkeys(x for v in variants.values() for x in v.added))
    full = Data(args.data, wanted)
    scores: dict[str, dict[int, np.ndarray]] = {}
    for name, v in variants.items():
        data = full.without(set(v.dropped) | (set(wanted) - set(v.added)))
        scores[name] = fold_scores(data, args.folds, v.params, v.rounds, v.untrained)
        print(f"variant {name}: {len(data.names)} features", file=sys.stderr, flush=True)
    index = {id(g): i for i, g in enumerate(full.groups)}
    systems = {"tuned": tuned_scores(full)}
    if args.shipped:
        from repolens.search.learned import bundled_ranker

        shipped = bundled_ranker()
        columns = [full.names.index(name) for name in shipped.features]
        systems["shipped"] = lambda g, sl: np.asarray(shipped.score_rows(full.rows[sl][:, columns].tolist()))
    for name, by_group in scores.items():
        systems[name] = lambda g, sl, by_group=by_group: by_group[index[id(g)]]
    spreads = [float(d) for d in args.diversity.split(",")] if args.diversity else [DIVERSITY]
    report = {
        slice_name: {
            system if len(spreads) == 1 else f"{system}@{d:g}": metrics(full, groups, of, d)
            for d in spreads
            for system, of in systems.items()
        }
        for slice_name, groups in slices(full).items()
    }
    print(f"$ {' '.join(sys.argv)}\n")
    print(render(report))


def _with(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(name for name in (args.with_ or "").split(",") if name)


def cv(args: argparse.Namespace) -> None:
    data = Data(args.data, _with(args))
    report = cross_validate(data, args.folds)
    Path(args.data).with_suffix(".cv.json").write_text(json.dumps(report, indent=1))
    print(f"$ {' '.join(sys.argv)}\n")
    print(render(report))


# -- export ----------------------------------------------------------------------


def export(booster, data: Data, cv_report: dict | None) -> dict:
    """The model file: the trees as flat lists (see repolens.search.learned)."""
    dump = booster.dump_model()
    feature, threshold, left, right, value, roots = [], [], [], [], [], []

    def add(node: dict) -> int:
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(0.0)
        if "leaf_value" in node:
            value[i] = float(node["leaf_value"])
            return i
        if node.get("decision_type", "<=") != "<=" or (
            node.get("default_left") is False and node.get("missing_type") not in (None, "None")
        ):
            raise SystemExit(f"unsupported split: {node.get('decision_type')} / {node.get('missing_type')}")
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        value[i] = float(node.get("internal_value", 0.0))
        left[i] = add(node["left_child"])
        right[i] = add(node["right_child"])
        return i

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"]))
    import lightgbm

    repos = Counter(g["repo"] for g in data.groups)
    snapshots: dict[str, set[str]] = defaultdict(set)
    for g in data.groups:
        if "commit" in g:
            snapshots[g["repo"]].add(g["commit"])
    return {
        "format": 1,
        "features": list(data.names),
        "roots": roots,
        "nodes": {"feature": feature, "threshold": threshold, "left": left, "right": right, "value": value},
        "provenance": {
            "made_by": "python -m bench.train_ranker fit",
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "questions": [
                {"file": Path(name).name, "digest": digest} for name, digest in source_pairs(data.source)
            ],
            "extracted_with": data.made,
            "fitted_by": code_commit(),
            "groups": len(data.groups),
            "candidates": len(data.rows),
            "repositories": dict(sorted(repos.items())),
            # each repository's snapshots the questions were asked of (data extracted before
            # the groups kept them has none)
            "snapshots": {repo: sorted(commits) for repo, commits in sorted(snapshots.items()) if commits},
            "kinds": dict(Counter(g["set"] for g in data.groups)),
            "lightgbm": lightgbm.__version__,
            "params": {k: v for k, v in PARAMS.items() if k not in ("verbose", "num_threads")},
            "rounds": ROUNDS,
            "cross_validated": {
                name: r for name, r in (cv_report or {}).items() if not name.startswith("language=")
            },
        },
    }


def fit(args: argparse.Namespace) -> None:
    data = Data(args.data, _with(args))
    booster = _train(data, data.groups)
    cv_path = Path(args.data).with_suffix(".cv.json")
    cv_report = json.loads(cv_path.read_text()) if cv_path.is_file() else None
    model = export(booster, data, cv_report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(model, separators=(",", ":")) + "\n")
    print(
        f"wrote {out}: {len(model['roots'])} trees, {len(model['nodes']['feature'])} nodes, "
        f"{out.stat().st_size // 1024} KB",
        file=sys.stderr,
    )
    if out.resolve() == MODEL_OUT.resolve():
        write_forest()


def write_forest() -> None:
    """The bundled model's trees as Python (what a search evaluates), from its file."""
    FOREST_OUT.write_text(forest_source(MODEL_OUT.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {FOREST_OUT} from {MODEL_OUT}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m bench.train_ranker",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["extract", "combine", "cv", "compare", "fit", "all", "forest"])
    ap.add_argument(
        "--mined",
        default=data_default("mined"),
        help="all: the mined set's folder (bench.mine_questions --out): questions, checkouts, meaning set",
    )
    ap.add_argument("--questions", help="the mined set (bench.mine_questions)")
    ap.add_argument("--checkouts", help="its snapshots' git checkouts")
    ap.add_argument("--index-cache", help="where their indexes are kept (as devsets.py keeps them)")
    ap.add_argument(
        "--data",
        "--out-data",
        dest="data",
        default=data_default("mined", "ranker-data.npz"),
        help="the candidates' features: extract writes it, cv and fit read it (cv writes D.cv.json by it)",
    )
    ap.add_argument("--out", default=str(MODEL_OUT), help="the model file fit writes (not extract's data)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--shipped", action="store_true", help="compare: the shipped model's order too")
    ap.add_argument("--with", dest="with_", help="cv, fit: EXTRA columns to add to FEATURES (comma list)")
    ap.add_argument("--only", help="regex on question ids (extract)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--snapshots", help="regex on checkout names (extract): only their questions")
    ap.add_argument("--inputs", help="combine: comma list of extracted data files, written as --data")
    ap.add_argument(
        "--variant",
        action="append",
        help="compare: NAME:+extra,-dropped,gains=0/1/1/3 (repeatable; default base:)",
    )
    ap.add_argument(
        "--diversity",
        help=f"compare: the packets' spread over files each order is scored at (comma list; {DIVERSITY})",
    )
    args = ap.parse_args(argv)
    if args.command == "extract":
        if not (args.questions and args.checkouts and args.index_cache):
            ap.error("extract needs --questions, --checkouts and --index-cache")
        extract(argparse.Namespace(**{**vars(args), "out": args.data}))
    if args.command == "all":
        if not args.mined or not (Path(args.mined) / "questions.json").is_file():
            ap.error("all needs --mined DIR (bench.mine_questions --out; default $REPOLENS_BENCH_DATA/mined)")
        args.data = str(extract_all(args))
    if args.command == "combine":
        combine(args)
    if args.command == "compare":
        compare(args)
    if args.command in ("cv", "all"):
        cv(args)
    if args.command in ("fit", "all"):
        fit(args)
    if args.command == "forest":
        write_forest()


if __name__ == "__main__":
    main()
