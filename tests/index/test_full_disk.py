"""A full disk under the index: one line that says so, the index as it was,
and a retry that works once space is freed.

The index lives on a small tmpfs mounted in a mount namespace of its own
(``unshare -rm``: no privilege needed where user namespaces are allowed,
and as root too), so no mount outlives the test, even a killed one. This
file is also the script run inside it (``python test_full_disk.py SPEC``):
it mounts the disk, runs the real CLI step by step and prints what it saw
as JSON for the test to check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repolens.search.remembered import NOT_REMEMBERED

# what the repository holds, then what a refresh adds
FILES = 150
ADDED = 600  # more than one batch of a build (BATCH_FILES)


def _module(i: int, tag: str) -> str:
    body = "".join(f"    value_{k} = value * {k} + {i}  # {tag} step {k}\n" for k in range(40))
    return f'"""Module {i} ({tag})."""\n\n\ndef compute_{tag}_{i}(value):\n{body}    return value_7\n'


# With little free space tantivy's commit fails; with more, SQLite's after it (a build
# would have committed a batch before it failed).
@pytest.mark.parametrize("free_kb", [48, 200, 700], ids=["little-free", "some-free", "a-batch-free"])
def test_a_refresh_that_fills_the_disk_is_undone_and_said_in_one_line(
    make_repo, tmp_path: Path, free_kb: int
):
    root = make_repo({f"pkg/m{i:03d}.py": _module(i, "old") for i in range(FILES)})
    disk = tmp_path / "disk"
    disk.mkdir()
    spec = {"root": str(root), "disk": str(disk), "size_kb": 12_000, "free_kb": free_kb}
    seen = _run_on_small_disk(spec)
    index = f"{disk}/ix"

    assert seen["first"]["code"] == 0, seen["first"]
    refresh = seen["refresh"]
    assert refresh["code"] == 1, refresh
    assert "unexpected" not in refresh["err"] and len(refresh["err"].splitlines()) == 1, refresh
    assert refresh["err"].startswith(f"error: no space left on the disk holding the index in {index} ("), (
        refresh
    )
    assert " free; the index needs about " in refresh["err"], refresh
    assert refresh["err"].endswith(
        "free some space (or pass --index-dir with a folder on another disk) and run `repolens index` again\n"
    )
    mcp = seen["mcp_refresh"]  # an MCP caller is told to call the tool, not to run a command
    assert mcp["error"] and mcp["text"].startswith(
        f"no space left on the disk holding the index in {index} ("
    ), mcp
    assert mcp["text"].endswith("free some space and call refresh_index again"), mcp
    # The old index, as it was: same files, same sizes, nothing left behind.
    assert seen["files_after_failure"] == seen["files_before"]
    assert seen["search_after_failure"]["code"] == 0
    assert "compute_old_3" in seen["search_after_failure"]["out"]

    rebuild = seen["rebuild"]
    assert rebuild["code"] == 1 and rebuild["err"].startswith("error: no space left on the disk"), rebuild
    assert "cannot be read" not in rebuild["err"]
    assert seen["files_after_rebuild"] == seen["files_before"]

    full = seen["search_on_a_full_disk"]  # --files said nothing, and printed a query_id that could not work
    assert full["code"] == 0 and full["out"].startswith(f"note: {NOT_REMEMBERED}\n\n1. pkg/m005.py"), full

    retry = seen["retry"]  # the filler is gone
    assert retry["code"] == 0 and retry["out"].startswith(f"refreshed {index}: {ADDED} new,"), retry
    assert "compute_new_7" in seen["search_after_retry"]["out"]


def _run_on_small_disk(spec: dict) -> dict:
    cmd = ["unshare", "-rm", sys.executable, __file__, json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        pytest.fail("this test needs `unshare` (util-linux) to mount a small tmpfs in a namespace of its own")
    if proc.returncode != 0:
        pytest.fail(
            "cannot run the indexer on a small tmpfs in a mount namespace (`unshare -rm` then `mount -t "
            f"tmpfs`; user namespaces disabled?): {proc.stderr.strip()[-2000:]}"
        )
    return json.loads(proc.stdout)


# -- inside the namespace ---------------------------------------------------------


def _cli(*args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    proc = subprocess.run(
        [sys.executable, "-m", "repolens", *args], capture_output=True, text=True, env=env, timeout=240
    )
    return {"code": proc.returncode, "out": proc.stdout, "err": proc.stderr}


def _mcp(tool: str, root: Path, index: Path) -> dict:
    """``tool`` called over MCP (the SDK's client, the server in this process)."""
    import asyncio

    from mcp import Client

    from repolens.server.tools import build_server

    async def call() -> dict:
        async with Client(build_server(root, index_dir=index)) as client:
            result = await client.call_tool(tool, {})
        return {"error": result.is_error, "text": "\n".join(c.text for c in result.content)}

    return asyncio.run(call())


def _files(index: Path) -> dict[str, int]:
    """Every file of the index's generations with its size, but the empty log
    and the shared memory a reader of the database leaves (any search does)."""
    sizes = {
        str(p.relative_to(index)): p.stat().st_size for p in sorted(index.glob("gen-*/**/*")) if p.is_file()
    }
    return {
        name: size
        for name, size in sizes.items()
        if not name.endswith("-shm") and not (name.endswith("-wal") and size == 0)
    }


def _fill(disk: Path, leave_kb: int, name: str = "filler") -> Path:
    filler = disk / name
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(filler, "wb") as f:
        if free > leave_kb * 1024:
            os.posix_fallocate(f.fileno(), 0, free - leave_kb * 1024)
    return filler


def _scenario(spec: dict) -> dict:
    root, disk = Path(spec["root"]), Path(spec["disk"])
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={spec['size_kb']}k", "tmpfs", str(disk)], check=True)
    index = disk / "ix"
    seen: dict = {"first": _cli("index", str(root), "--index-dir", str(index))}
    seen["files_before"] = _files(index)
    filler = _fill(disk, spec["free_kb"])
    for i in range(ADDED):
        (root / f"pkg/n{i:03d}.py").write_text(_module(i, "new"))
    seen["refresh"] = _cli("index", str(root), "--index-dir", str(index))
    seen["mcp_refresh"] = _mcp("refresh_index", root, index)
    seen["files_after_failure"] = _files(index)
    seen["search_after_failure"] = _cli(
        "search", "compute_old_3", "--root", str(root), "--index-dir", str(index)
    )
    seen["rebuild"] = _cli("index", str(root), "--index-dir", str(index), "--rebuild")
    seen["files_after_rebuild"] = _files(index)
    full = _fill(disk, 0, "full")  # not a byte left: a search answers, and is not remembered
    seen["search_on_a_full_disk"] = _cli(
        "search", "compute_old_5", "--root", str(root), "--index-dir", str(index), "--files"
    )
    full.unlink()
    filler.unlink()
    seen["retry"] = _cli("index", str(root), "--index-dir", str(index))
    seen["search_after_retry"] = _cli(
        "search", "compute_new_7", "--root", str(root), "--index-dir", str(index)
    )
    return seen


if __name__ == "__main__":
    print(json.dumps(_scenario(json.loads(sys.argv[1]))))
