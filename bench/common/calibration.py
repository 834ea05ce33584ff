"""Learn how a repository's evidence weighs in a search across repositories (issue 37 item 4).

``bench.org ranking --collect FILE`` records, for each mined question asked
among many repositories, every repository's evidence
(:func:`repolens.search.across.repository_evidence`) and its hits' cross
scores and file coverages; :func:`fit_report` (``bench.org ranking --fit
FILE``) then chooses the weights of :class:`repolens.search.across.Calibration`
by coordinate ascent on a grid, training on the questions of all but one
fold of repositories and scoring the held-out fold, and prints own-first
and file Acc@5 across (the first five distinct files of the merged order),
for the engine's weights and the learned ones, per fold and overall, then
the weights learned on every question: the values to ship.
"""

from __future__ import annotations

from collections import Counter

from repolens.search.across import CALIBRATION, EVIDENCE, Calibration

# The grid each weight is chosen from (one weight at a time, the others held).
GRID = {
    "coverage": (0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0),
    "file_coverage": (0.0, 1.0, 2.0, 4.0, 6.0, 8.0),
    "named": (0.0, 1.0, 2.0, 4.0, 8.0),
    "paths": (0.0, 1.0, 2.0, 4.0, 8.0),
    "defines": (0.0, 0.5, 1.0, 2.0, 4.0),
    "margin": (0.0, 0.25, 0.5, 1.0, 2.0),
}
ROUNDS = 3


def merged(question: dict, weights: Calibration) -> tuple[bool, bool]:
    """(own repository first, every gold file among the first five distinct files)."""
    scored = []
    for repo in question["repos"]:
        prior = sum(getattr(weights, name) * repo["evidence"][name] for name in EVIDENCE)
        for cross, file_log, path, gold in repo["hits"]:
            scored.append(
                (cross + prior + weights.file_coverage * file_log, repo["own"], repo["key"], path, gold)
            )
    if not scored:
        return False, False
    scored.sort(key=lambda s: (-s[0], s[2], s[3]))
    files: list[tuple[str, str, bool]] = []
    for _, _, key, path, gold in scored:
        if (key, path, gold) not in files:
            files.append((key, path, gold))
        if len(files) == 5:
            break
    return scored[0][1], sum(g for _, _, g in files) >= question["gold"]


def score(questions: list[dict], weights: Calibration) -> tuple[float, float]:
    """Own-first and Acc@5 across, means over ``questions``."""
    if not questions:
        return 0.0, 0.0
    got = [merged(q, weights) for q in questions]
    return sum(a for a, _ in got) / len(got), sum(b for _, b in got) / len(got)


def fit(questions: list[dict], start: Calibration = CALIBRATION) -> Calibration:
    """Weights that maximise own-first plus Acc@5 on ``questions``, one weight at a time."""
    best = start
    best_value = sum(score(questions, best))
    for _ in range(ROUNDS):
        moved = False
        for name, grid in GRID.items():
            for value in grid:
                trial = best._replace(**{name: value})
                got = sum(score(questions, trial))
                if got > best_value + 1e-9:
                    best, best_value, moved = trial, got, True
        if not moved:
            break
    return best


def folds(questions: list[dict], k: int) -> list[set[str]]:
    """Repositories in ``k`` folds of about equal numbers of questions."""
    sizes = Counter(q["repo"] for q in questions)
    out: list[set[str]] = [set() for _ in range(k)]
    load = [0] * k
    for repo, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        i = load.index(min(load))
        out[i].add(repo)
        load[i] += n
    return out


def fit_report(questions: list[dict], k: int) -> None:
    """Cross-validated figures of the learned calibration against the engine's, and the weights to ship."""
    held: list[tuple[dict, bool, bool]] = []
    print(f"{len(questions)} questions, {len({q['repo'] for q in questions})} repositories, {k} folds\n")
    print("| fold | n | own first engine -> learned | Acc@5 across engine -> learned |")
    print("|---|---|---|---|")
    for n, fold in enumerate(folds(questions, k), 1):
        train = [q for q in questions if q["repo"] not in fold]
        test = [q for q in questions if q["repo"] in fold]
        weights = fit(train)
        before, after = score(test, CALIBRATION), score(test, weights)
        print(
            f"| {n} | {len(test)} | {before[0]:.3f} -> {after[0]:.3f} | {before[1]:.3f} -> {after[1]:.3f} |"
        )
        held += [(q, *merged(q, weights)) for q in test]
    for kind in [*sorted({q["set"] for q in questions}), "all"]:
        part = [(q, a, b) for q, a, b in held if kind in ("all", q["set"])]
        base = score([q for q, _, _ in part], CALIBRATION)
        own = sum(a for _, a, _ in part) / len(part)
        acc = sum(b for _, _, b in part) / len(part)
        print(f"| {kind} | {len(part)} | {base[0]:.3f} -> {own:.3f} | {base[1]:.3f} -> {acc:.3f} |")
    final = fit(questions)
    print(f"\nlearned on all {len(questions)} questions: {final}")
    engine, learned = score(questions, CALIBRATION), score(questions, final)
    print(f"(the engine's: {CALIBRATION}; on all of them, engine {engine} -> learned {learned})")
