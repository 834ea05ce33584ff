"""Mine training questions from the git history of many repositories (issue 28, item 1).

    python -m bench.mine_questions --mirrors DIR --out DIR [--seed 28] [--until 2026-08-01]
        [--years 6] [--snapshots 12] [--window 150] [--commit-cap 20] [--ident-cap 12] [--issue-cap 20]
        [--repos REGEX] [--make-checkouts PATH]

Per repository (``mine_paths.REPOS``, those whose mirror is in ``--mirrors``),
a few snapshot commits S are spread over the default branch's first-parent
history of the ``--years`` before ``--until``, each placed where it serves the
most commits (``mine_snapshots``). Each snapshot is searched as a
git work tree whose history stops at S (``OUT/checkouts``, made by
``make_checkouts.sh`` with ``HISTORY=1``), and asks three kinds of question:

``commits``      a later non-merge commit C (a descendant of S, within the
                 next ``--window`` first-parent commits) whose gold files are
                 byte-identical at S and at C's parent: its cleaned message,
                 gold = the lines it deleted or replaced (``mine_commits``)
``subjects``     the same commits asked by their subject alone, when the
                 message has more than its subject and the subject has at
                 least 3 words: same gold, ``query`` = ``title``
``identifiers``  a name defined once in S's source, used in 2-30 other files;
                 gold = its definition (``mine_defs``)
``issues``       a commit of the window, as for ``commits`` (a subject of 3+
                 words suffices), that also adds lines to a test: asked as
                 the bug report its reporter would have written (symptoms from
                 the message, the test as the reproduction, a traceback-shaped
                 excerpt of its calls); same gold (``bench.mining.issues``)

Nothing after C's parent can be seen from S: S is an ancestor of C's parent,
the checkout's only ref is S, and a commit whose subject already occurs in S's
history (a cherry-pick or backport of the same change) is dropped.

Then ``OUT/meaning`` (``bench.meaning set`` on the newest snapshot of each
repository): functions asked by their doc comments in copies where the
comments are deleted, a fifth kind to train on (``--no-meaning`` skips it).

Writes ``OUT/questions.json`` in the development set's schema
(``shared/bench/README.md``) and prints counts per kind, language and
repository. Deterministic for a given seed and ``--until``: later mirrors give
the same set as long as the default branches were not rewritten.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.common.paths import SHARED
from bench.mining.commits import Candidate, clean_message, commit_question, git, qualify, window_commits
from bench.mining.defs import gold_functions, identifier_questions, run_ctags
from bench.mining.issues import MIN_ISSUE_WORDS, definitions, issue_question
from bench.mining.paths import REPOS, RepoSpec, is_test
from bench.mining.snapshots import Snapshot, blobs_at, choose_snapshots, first_parent

PER_GOLD_SET = 2  # at most this many questions per identical set of gold files, per snapshot
MIN_SUBJECT_WORDS = 3


def mirror_dir(mirrors: Path, repo: str) -> Path | None:
    gd = mirrors / repo.replace("/", "+") / "repo"
    gd = gd / ".git" if (gd / ".git").is_dir() else gd
    return gd if (gd / "objects").is_dir() else None


def make_checkouts(snaps: list[Snapshot], out: Path, mirrors: Path, script: Path) -> None:
    """One git work tree per snapshot, history up to S only, by the development set's script."""
    pairs = [{"repo": s.spec.repo, "commit": s.sha} for s in snaps]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(pairs, fh)
    try:
        env = {**os.environ, "HISTORY": "1"}
        cmd = ["bash", str(script), str(out), str(mirrors), fh.name]
        subprocess.run(cmd, env=env, stdout=sys.stderr, check=False)  # stdout carries the report
    finally:
        os.unlink(fh.name)


def checkout_leak(tree: Path, sha: str) -> str:
    """Why the checkout could show history past S ("" when it cannot)."""

    def run(*a: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *a], capture_output=True, text=True).stdout.strip()

    if not (tree / ".checkout_ok").is_file():
        return "no checkout"
    if run("rev-parse", "HEAD") != sha:
        return "HEAD is not the snapshot"
    if run("rev-list", "--all", "--reflog", "--not", "HEAD"):
        return "commits past the snapshot are reachable"
    refs = run("for-each-ref", "--format=%(refname)").split()
    return "" if refs == ["refs/heads/main"] else f"refs other than main: {refs}"


def verify_commit_questions(questions: list[dict], mirrors: dict[str, Path]) -> list[str]:
    """Check every commit question again, independently of how it was mined: its
    snapshot is an ancestor of the fix's parent and not of the fix, and its gold
    files have the same blobs in both. One line per failure, ``<repo>@<sha12>: why``."""
    problems = []
    seen = set()
    for q in questions:
        key = q["id"].split(":", 1)[1]  # <owner>/<name>@<sha12>, shared by a commit and its subject
        if q["set"] == "identifiers" or key in seen:
            continue
        seen.add(key)
        gd, snap = mirrors[q["repo"]], q["commit"]
        fix, parent = q["source"]["fix_commit"], q["source"]["parent"]

        def ancestor(a: str, b: str, gd: Path = gd) -> bool:
            cmd = ["git", "--git-dir", str(gd), "merge-base", "--is-ancestor", a, b]
            return subprocess.run(cmd, capture_output=True).returncode == 0

        if not ancestor(snap, parent):
            problems.append(f"{key}: the snapshot is not an ancestor of the fix's parent")
        elif ancestor(fix, snap):
            problems.append(f"{key}: the fix is in the snapshot's history")
        else:
            specs = [f"{c}:{path}" for path in q["gold_files"] for c in (snap, parent)]
            blobs = blobs_at(gd, specs)
            if blobs[0::2] != blobs[1::2] or "" in blobs:
                problems.append(f"{key}: gold files differ between the snapshot and the fix's parent")
    return problems


def record(kind: str, qid: str, snap: Snapshot, query: str, title: str, gold: dict) -> dict:
    """A question in the development set's schema and key order."""
    return {
        "id": qid,
        "set": kind,
        "repo": snap.spec.repo,
        "commit": snap.sha,
        "language": snap.spec.language,
        "query": query,
        "title": title,
        "gold_files": gold["gold_files"],
        "gold_ranges": gold["gold_ranges"],
        "gold_functions": gold.get("gold_functions", []),
        "source": gold["source"],
    }


def _title(message: str) -> str:
    """A subject as compared for duplicates: cleaned, lower-cased, spaces collapsed."""
    return " ".join(clean_message(message.split("\n", 1)[0]).lower().split())


def spread(cands: list[Candidate], cap: int, rng: random.Random) -> list[Candidate]:
    """At most ``PER_GOLD_SET`` per identical gold set, then ``cap`` drawn at random, in date order."""
    per_set: Counter[tuple[str, ...]] = Counter()
    kept = []
    for cand in rng.sample(cands, len(cands)):
        if per_set[cand.gold_files] < PER_GOLD_SET:
            per_set[cand.gold_files] += 1
            kept.append(cand)
    return sorted(kept[:cap], key=lambda c: c.commit.date)


def mine_snapshot(snap: Snapshot, gd: Path, tree: Path, args, state: dict) -> list[dict]:
    """The questions of one snapshot; ``state`` carries the repository's used
    subjects and names, and the tally of why commits were dropped."""
    spec, reasons = snap.spec, state["reasons"]
    rng = random.Random(f"{args.seed}/{spec.repo}/{snap.sha}")
    blobs = {}
    for line in git(gd, "ls-tree", "-r", "-z", snap.sha).split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            blobs[path] = meta.split()[2]
    # A change whose subject is already in S's history (a cherry-pick, a backport) would show its answer.
    past_titles = {_title(s) for s in git(gd, "log", "--format=%s", snap.sha).splitlines()}
    cands, issue_cands = [], []
    for commit in window_commits(gd, snap.sha, snap.end):
        # an issue question needs fewer words of message: its test is the rest of the report
        got = qualify(commit, spec, blobs, min_words=MIN_ISSUE_WORDS)
        if not isinstance(got, str) and _title(got.query) not in past_titles | state["issue_titles"]:
            state["issue_titles"].add(_title(got.query))
            issue_cands.append(got)
        got = qualify(commit, spec, blobs)
        if isinstance(got, str):
            reasons[got] += 1
            continue
        title = _title(got.query)
        if title in past_titles:
            reasons["subject already in the snapshot's history"] += 1
            continue
        if title in state["titles"]:
            reasons["same subject mined before"] += 1
            continue
        state["titles"].add(title)
        cands.append(got)
    files = sorted(blobs)
    lang_files = [p for p in files if p.endswith(spec.exts) and not is_test(p) and (tree / p).is_file()]
    tags = run_ctags(tree, lang_files)
    out = []
    golds = []
    for cand in cands:
        gold = commit_question(cand, gd, tree)
        if isinstance(gold, str):
            reasons[gold] += 1
        else:
            golds.append((cand, gold))
    by_sha = dict((c.commit.sha, g) for c, g in golds)
    for cand in spread([c for c, _ in golds], args.commit_cap, rng):
        c, gold = cand.commit, by_sha[cand.commit.sha]
        gold["gold_functions"] = gold_functions(
            [t for t in tags if t.path in cand.gold_files], gold["gold_ranges"]
        )
        gold["source"] = {"fix_commit": c.sha, "parent": c.parents[0], "date": c.date,
                          "url": f"https://github.com/{spec.repo}/commit/{c.sha}"}  # fmt: skip
        title = cand.query.split("\n", 1)[0].strip()
        out.append(record("commits", f"commit:{spec.repo}@{c.sha[:12]}", snap, cand.query, title, gold))
        # a message that is its subject alone is already a subject question
        if len(title.split()) >= MIN_SUBJECT_WORDS and cand.query.strip() != title:
            out.append(record("subjects", f"subject:{spec.repo}@{c.sha[:12]}", snap, title, title, gold))
    for q in identifier_questions(tags, tree, files, spec, state["names"], args.ident_cap, rng):
        name = q.pop("name")
        out.append(record("identifiers", f"ident:{spec.repo}:{name}", snap, name, name, q))
    out += issue_questions(issue_cands, snap, gd, tree, tags, args.issue_cap, state["issue_reasons"])
    return out


def issue_questions(cands: list[Candidate], snap: Snapshot, gd: Path, tree: Path, tags, cap: int,
                    reasons: Counter[str]) -> list[dict]:  # fmt: skip
    """Up to ``cap`` issue-shaped questions of one snapshot (``bench.mining.issues``),
    drawn with a seed of their own, so the other kinds are mined as before."""
    spec = snap.spec
    rng = random.Random(f"{spec.repo}/{snap.sha}/issues")
    defs = definitions(tags)
    out = []
    for cand in rng.sample(cands, len(cands)):
        if len(out) >= cap:
            break
        gold = commit_question(cand, gd, tree)
        if isinstance(gold, str):
            reasons[gold] += 1
            continue
        gold["gold_functions"] = gold_functions(
            [t for t in tags if t.path in cand.gold_files], gold["gold_ranges"]
        )
        asked = issue_question(cand, gd, spec, defs, rng, gold["gold_functions"], tree)
        if isinstance(asked, str):
            reasons[asked] += 1
            continue
        c = cand.commit
        url = f"https://github.com/{spec.repo}/commit/{c.sha}"
        gold["source"] = {"fix_commit": c.sha, "parent": c.parents[0], "date": c.date, "url": url,
                          "repro": asked["repro"]}  # fmt: skip
        qid = f"issue:{spec.repo}@{c.sha[:12]}"
        out.append(record("issues", qid, snap, asked["query"], asked["title"], gold))
    return sorted(out, key=lambda q: q["source"]["date"])


def table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


KINDS = ("commits", "subjects", "identifiers", "issues")


def breakdown(questions: list[dict], field: str) -> str:
    counts = Counter((q[field], q["set"]) for q in questions)
    values = sorted({q[field] for q in questions})
    rows = [[v, *(counts[v, k] for k in KINDS), sum(counts[v, k] for k in KINDS)] for v in values]
    rows.append(["all", *(sum(counts[v, k] for v in values) for k in KINDS), len(questions)])
    return table([field, *KINDS, "total"], rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.mine_questions", description=__doc__.splitlines()[0])
    mirrors_env = os.environ.get("MIRRORS")
    ap.add_argument("--mirrors", type=Path, default=Path(mirrors_env) if mirrors_env else None,
                    help="root of the fetched mirrors, <owner>+<name>/repo (default $MIRRORS)")  # fmt: skip
    ap.add_argument("--out", type=Path, required=True, help="writes questions.json and checkouts/ here")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--until", default="2026-08-01", help="newest first-parent commit date considered")
    ap.add_argument("--years", type=float, default=6.0, help="how far back from --until snapshots go")
    ap.add_argument("--snapshots", type=int, default=12, help="most snapshots per repository")
    ap.add_argument("--window", type=int, default=150, help="first-parent commits mined after a snapshot")
    ap.add_argument("--commit-cap", type=int, default=20, help="most commit questions per snapshot")
    ap.add_argument("--ident-cap", type=int, default=12, help="most identifier questions per snapshot")
    ap.add_argument("--issue-cap", type=int, default=20, help="most issue-shaped questions per snapshot")
    ap.add_argument("--repos", help="regex on owner/name: mine only these")
    ap.add_argument("--make-checkouts", type=Path, default=SHARED / "make_checkouts.sh")
    ap.add_argument(
        "--no-meaning",
        action="store_true",
        help="skip OUT/meaning, the functions of one snapshot per repository asked by their doc comments",
    )
    args = ap.parse_args(argv)
    if not args.mirrors or not args.mirrors.is_dir():
        sys.exit(
            "no mirrors: pass --mirrors DIR (the folder where fetch puts <owner>+<name>/repo) or set MIRRORS"
        )
    if not args.make_checkouts.is_file():
        sys.exit(f"{args.make_checkouts} not found: pass --make-checkouts (shared/bench/make_checkouts.sh)")
    t0 = time.monotonic()
    until = datetime.fromisoformat(args.until).replace(tzinfo=UTC)
    since = until - timedelta(days=365.25 * args.years)
    checkouts = args.out / "checkouts"
    plan: list[tuple[RepoSpec, Path, list[Snapshot]]] = []
    for spec in REPOS:
        if args.repos and not re.search(args.repos, spec.repo):
            continue
        gd = mirror_dir(args.mirrors, spec.repo)
        if gd is None:
            print(f"{spec.repo}: no mirror under {args.mirrors}, skipped", file=sys.stderr)
            continue
        snaps = choose_snapshots(spec, gd, first_parent(gd, since, until), args.snapshots, args.window)
        plan.append((spec, gd, snaps))
    make_checkouts([s for _, _, snaps in plan for s in snaps], checkouts, args.mirrors, args.make_checkouts)

    questions: list[dict] = []
    reasons: Counter[str] = Counter()
    issue_reasons: Counter[str] = Counter()
    failed = []
    for _spec, gd, snaps in plan:
        state = {"titles": set(), "names": set(), "reasons": reasons, "issue_titles": set(),
                 "issue_reasons": issue_reasons}  # fmt: skip
        for snap in snaps:
            tree = checkouts / snap.checkout
            if leak := checkout_leak(tree, snap.sha):
                failed.append(f"{snap.checkout}: {leak}")
                continue
            got = mine_snapshot(snap, gd, tree, args, state)
            questions += got
            kinds = Counter(q["set"] for q in got)
            print(f"{snap.checkout} ({snap.date[:10]}): " + ", ".join(f"{kinds[k]} {k}" for k in KINDS),
                  file=sys.stderr, flush=True)  # fmt: skip
    problems = verify_commit_questions(questions, {spec.repo: gd for spec, gd, _ in plan})
    bad = {p.split(":", 1)[0] for p in problems}
    questions = [q for q in questions if q["id"].split(":", 1)[1] not in bad]
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = args.out / "questions.json.part"
    tmp.write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(args.out / "questions.json")
    if not args.no_meaning:  # the mined meaning set: functions asked by their doc comments, to train on
        from bench.meaning import devset

        devset.main(["--data", str(args.out), "--files", "questions.json", "--checkouts", str(checkouts),
                     "--out", str(args.out / "meaning")])  # fmt: skip

    print(f"$ {shlex.join(['python', *sys.argv])}\n")
    n_snaps = sum(len(s) for _, _, s in plan)
    print(f"{len(questions)} questions from {len(plan)} repositories, {n_snaps} snapshots "
          f"({len(failed)} failed), seed {args.seed}, {since:%Y-%m-%d}..{until:%Y-%m-%d}, "
          f"{time.monotonic() - t0:.0f}s -> {args.out / 'questions.json'}\n")  # fmt: skip
    for line in failed:
        print(f"- failed: {line}")
    n_commits = len({q["source"]["fix_commit"] for q in questions if q["set"] != "identifiers"})
    print(f"leak checks: {n_snaps - len(failed)} checkouts whose only ref is the snapshot and no commit is "
          f"reachable past it; {n_commits} fix commits whose snapshot is an ancestor of their parent, "
          f"not of the fix, with gold blobs equal at both: {len(problems)} failed (dropped)")  # fmt: skip
    for line in problems:
        print(f"- {line}")
    print()
    print(breakdown(questions, "language") + "\n")
    print(breakdown(questions, "repo") + "\n")
    print(table(["commits dropped because", "n"], [[r, n] for r, n in reasons.most_common()]) + "\n")
    print(table(["issue questions dropped because", "n"], [[r, n] for r, n in issue_reasons.most_common()]))


if __name__ == "__main__":
    main()
