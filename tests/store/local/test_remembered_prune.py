"""Remembered results of a local index are pruned in batches, newest kept; a result
remembered again unchanged is not written again."""

import os

from repolens.store.local.remembered import KEEP, PRUNE_AT, recall, remember


def test_remembered_results_are_pruned_to_the_newest_when_the_folder_passes_its_limit(tmp_path):
    ids = [format(i, "x") for i in range(PRUNE_AT + 1)]
    for i, query_id in enumerate(ids):
        assert remember(tmp_path, query_id, f'{{"n": {i}}}')
        # explicit, distinct times: the newest are the last written
        os.utime(tmp_path / "queries" / f"{query_id}.json", (1_000_000 + i, 1_000_000 + i))
        assert len(os.listdir(tmp_path / "queries")) <= PRUNE_AT
    kept = sorted(os.listdir(tmp_path / "queries"))
    assert len(kept) == KEEP
    assert recall(tmp_path, ids[-1]) == f'{{"n": {PRUNE_AT}}}'
    assert recall(tmp_path, ids[-KEEP]) is not None
    assert recall(tmp_path, ids[-KEEP - 1]) is None


def test_a_result_remembered_again_unchanged_is_not_rewritten_but_dated_anew(tmp_path):
    assert remember(tmp_path, "abc", '{"n": 1}')
    path = tmp_path / "queries" / "abc.json"
    os.utime(path, (1_000_000, 1_000_000))
    inode = path.stat().st_ino
    assert remember(tmp_path, "abc", '{"n": 1}')
    assert path.stat().st_ino == inode  # left in place, not replaced by a new copy
    assert path.stat().st_mtime > 1_000_000  # the newest again, for pruning
    assert remember(tmp_path, "abc", '{"n": 2}')  # another result under the id is written
    assert recall(tmp_path, "abc") == '{"n": 2}'
    assert path.stat().st_ino != inode
