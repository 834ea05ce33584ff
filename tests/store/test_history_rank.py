"""The history's BM25 in its two forms, numpy's (a server's) and plain Python
(a process that asks one question and never loads numpy), gives the same
commits with the same scores to the bit."""

from __future__ import annotations

import random
import subprocess
import sys
from array import array

from repolens.store.history_rank import top_commits_numpy, top_commits_python


def _history(rng: random.Random):
    n = rng.choice((1, 3, 40, 800, 5000))
    ids = array("I", sorted(rng.sample(range(1, 3 * n + 10), n)))
    lengths = array("I", (rng.choice((0, 1, rng.randint(2, 400))) for _ in range(n)))
    lists = {}
    for term in ("fix", "session", "cookie", "parse", "url", "zz"):
        if rng.random() < 0.2:
            continue
        held = sorted(rng.sample(list(ids), rng.randint(1, min(n, 600))))
        lists[term] = (array("I", held), array("I", (rng.choice((1, 1, 2, 7)) for _ in held)))
    weights = {
        t: rng.choice((1.0, 1.5, 2.0, 3.0, rng.uniform(0.1, 4))) for t in ("fix", "url", "cookie", "x")
    }
    weights.update({t: 1.0 for t in rng.sample(sorted(lists) or ["x"], 1)})
    return ids, lengths, lists, weights, rng.choice((1, 10, 50))


def test_both_forms_rank_alike_to_the_bit():
    rng = random.Random(36)
    ranked = 0
    for _ in range(300):
        history = _history(rng)
        python = top_commits_python(*history)
        assert top_commits_numpy(*history) == python
        ranked += len(python)
    assert ranked > 1000


def test_a_search_in_a_new_process_does_not_load_numpy_for_the_history():
    probe = (
        "import sys; from array import array; from repolens.store.history_rank import top_commits; "
        "r = top_commits(array('I', [1, 2]), array('I', [3, 5]), {'a': (array('I', [2]), array('I', [1]))}, "
        "{'a': 1.0}, 5); print(r[0][0], 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["2", "False"]
