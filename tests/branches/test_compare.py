"""compare_branches: every status, by path and by query, bounded, through
the service, the CLI and the MCP client."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from branch_fixtures import SAME, Branches, indexed, make_branches
from mcp import Client

from repolens import service
from repolens.branches.registry import EMPTY
from repolens.errors import NotFoundError, UsageError
from repolens.server.config import load_serve_config
from repolens.server.tools import build_server
from repolens.store import STORE_ENV
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools


@pytest.fixture
def branches(make_repo, git, write_tree, store_url) -> Branches:
    """Both branches indexed, in each store backend."""
    return indexed(make_branches(make_repo, git, write_tree))


def _roots(b: Branches) -> dict[str, Path]:
    return {"app@main": b.main, "app@develop": b.develop}


def test_paths_get_all_four_statuses_by_content_hash(branches, store_url):
    assert (branches.main / ".repolens").exists() == (store_url is None)  # the backend in use
    (branches.develop / "shop/m00.py").touch()  # a newer mtime is not a change
    result = service.compare_branches("app", _roots(branches), EMPTY, paths=["shop", "nowhere.py"])
    assert (result.base, result.head) == ("main", "develop")
    got = {f.path: f.status for f in result.files}
    assert got == {
        **dict.fromkeys(SAME, "same"),
        "shop/billing.py": "modified",
        "shop/coupons.py": "only_head",
        "shop/legacy.py": "only_base",
    }
    assert result.not_found == ["nowhere.py"]
    text = result.render()
    assert text.splitlines()[0] == (
        "app: base main vs head develop; 13 files: 10 same, 1 modified, 1 only_head, 1 only_base"
    )
    assert "modified      shop/billing.py" in text and "in neither branch: nowhere.py" in text


def test_a_local_absolute_path_is_taken_from_the_base_root_as_a_path_filter_is(branches):
    """QA: a local caller's absolute path lost its leading slash
    (``/etc/passwd`` was looked up as ``etc/passwd``) and one inside the
    repository was never found: compare_branches checked its paths apart
    from the other tools. Now, as a search's path filter, one inside the
    base branch's root is the path from it, one outside is refused."""
    inside = str(branches.main / "shop" / "billing.py")
    result = service.compare_branches("app", _roots(branches), EMPTY, paths=[inside])
    assert [(f.path, f.status) for f in result.files] == [("shop/billing.py", "modified")]
    with pytest.raises(UsageError, match=r"^path '/etc/passwd' is outside the repository root "):
        service.compare_branches("app", _roots(branches), EMPTY, paths=["/etc/passwd"])


def test_a_side_indexed_from_another_branch_than_its_name_says_is_noted(branches, git):
    """``app@develop`` checked out on another branch and indexed so is
    compared as it is, with a note: the name no longer says what it holds."""
    git(branches.develop, "checkout", "-q", "-b", "hotfix")
    service.index_repo(branches.develop)
    result = service.compare_branches("app", _roots(branches), EMPTY, paths=["shop/billing.py"])
    assert result.notes == ["app@develop is indexed from the branch hotfix, not develop"]
    assert result.render().splitlines()[1] == f"note: {result.notes[0]}"
    assert result.to_json()["notes"] == result.notes
    assert service.compare_branches("app", _roots(branches), EMPTY, paths=["shop"]).notes == result.notes


def test_a_detached_worktree_is_recorded_by_the_name_git_worktree_gives_it(branches, git):
    """A worktree at a detached HEAD is named ``detached-<12 hex>`` (as the
    worktrees of a repository are listed): its index records that name, so
    comparing it says nothing of another branch."""
    git(branches.develop, "checkout", "-q", "--detach")
    service.index_repo(branches.develop)
    name = "detached-" + git(branches.develop, "rev-parse", "HEAD").strip()[:12]
    assert service.index_status(branches.develop).branch == name
    roots = {"app@main": branches.main, f"app@{name}": branches.develop}
    result = service.compare_branches("app", roots, EMPTY, base="main", head=name, paths=["shop/billing.py"])
    assert (result.head, result.notes) == (name, [])


def test_one_configured_branch_is_single_branch(branches):
    result = service.compare_branches("app", {"app": branches.main}, EMPTY, paths=["shop/billing.py"])
    assert [(f.path, f.status) for f in result.files] == [("shop/billing.py", "single_branch")]
    assert result.render().startswith("app: one branch configured (app), nothing to compare with; 1 file")


def test_a_query_compares_the_files_it_finds_with_their_hits(branches):
    result = service.compare_branches("app", _roots(branches), EMPTY, query="refund_policy order days")
    first = result.files[0]
    assert (first.path, first.status) == ("shop/billing.py", "modified")
    sides = {h.side: h for h in first.hits}
    assert set(sides) == {"base", "head"}
    assert sides["base"].snippet == sides["head"].snippet == "def invoice_total(lines):"
    assert result.render().splitlines()[0] == (
        "app: base main vs head develop, files matching 'refund_policy order days'; 1 file: 1 modified"
    )
    assert result.to_json()["files"][0]["hits"][0]["start_line"] >= 1


def test_the_reply_is_bounded_with_the_shared_trailer(branches):
    result = service.compare_branches("app", _roots(branches), EMPTY, paths=["shop"], max_chars=300)
    text = result.render()
    assert len(text) <= 300
    assert "more files did not fit" in text.splitlines()[-1]


def test_the_informative_files_come_first(branches):
    """modified, only_head and only_base before the files that are the same,
    which a tight budget leaves to the trailer (they ate it, in path order)."""
    asked = [*SAME, "shop/billing.py", "shop/coupons.py", "shop/legacy.py"]  # the same files first
    result = service.compare_branches("app", _roots(branches), EMPTY, paths=asked, max_chars=300)
    lines = result.render().splitlines()
    assert lines[1:4] == [
        "modified      shop/billing.py",
        "only_head     shop/coupons.py",
        "only_base     shop/legacy.py",
    ]
    assert lines[4] == "same          shop/m00.py"
    assert lines[-1].startswith("... 9 more files did not fit: shop/m01.py, shop/m02.py")
    assert [f["status"] for f in result.to_json()["files"]][:4] == [
        "modified",
        "only_head",
        "only_base",
        "same",
    ]


def test_the_smallest_reply_shows_the_best_file_and_a_line_of_it(branches):
    """Not the counts alone: the best file, and its best hit's line cut to fit."""
    for budget in (200, 700):
        result = service.compare_branches(
            "app", _roots(branches), EMPTY, query="refund_policy order days", max_chars=budget
        )
        lines = result.render().splitlines()
        assert len(result.render()) <= budget
        assert lines[1] == "modified      shop/billing.py", lines
        assert lines[2].startswith("  base 1-6: def "), lines


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"repo": "shop"}, NotFoundError, "unknown repository 'shop': known repositories are app"),
        ({"repo": "app", "head": "nope"}, NotFoundError, "has no branch 'nope'"),
        ({"repo": "app", "base": "develop", "head": "develop"}, UsageError, "both develop"),
        ({"repo": "app"}, UsageError, "pass either paths"),
        (
            {"repo": "app", "paths": [""]},
            UsageError,
            "path '' is empty: pass a folder or file, or leave it out",
        ),
        # several wrong: the first in the arguments' order (repo, base, head,
        # paths, query, max_chars) is named, not a later one
        ({"repo": " ", "paths": ["../x"], "max_chars": 5}, UsageError, "^pass repo: "),
        ({"repo": "shop", "paths": ["../x"], "max_chars": 5}, NotFoundError, "^unknown repository 'shop'"),
        ({"repo": "app", "base": "nope", "paths": [""]}, NotFoundError, "has no branch 'nope'"),
        ({"repo": "app", "head": "nope", "paths": [], "query": ""}, NotFoundError, "has no branch 'nope'"),
        ({"repo": "app", "base": "develop", "head": "develop", "paths": []}, UsageError, "both develop"),
        ({"repo": "app", "paths": ["../x"], "max_chars": 5}, UsageError, "^path filter '../x' must be"),
        ({"repo": "app", "query": " ", "max_chars": 5}, UsageError, "^query is empty"),
        # a few files or folders, each looked up in both indexes (a folder covers all under it)
        ({"repo": "app", "paths": ["shop"] * 101}, UsageError, "^paths: at most 100 files or folders"),
    ],
)
def test_bad_arguments_say_what_to_pass(branches, kwargs, error, needle):
    args = {"paths": ["shop"], **kwargs} if kwargs != {"repo": "app"} and "query" not in kwargs else kwargs
    with pytest.raises(error, match=needle):
        service.compare_branches(roots=_roots(branches), registry=EMPTY, **args)


def test_cli_compare_reads_the_config_file(branches, tmp_path: Path, store_url):
    config = tmp_path / "repolens.toml"
    config.write_text(f'[roots]\napp = {{ main = "{branches.main}", develop = "{branches.develop}" }}\n')
    unset = ("REPOLENS_INDEX_DIR", "REPOLENS_CONFIG", STORE_ENV)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    store = ["--store", store_url] if store_url else []
    # The config names the indexes (app@main, app@develop in a store): refresh --all builds them so.
    refresh = [sys.executable, "-m", "repolens", "refresh", "--all", "--config", str(config), *store]
    done = subprocess.run(refresh, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    run = [sys.executable, "-m", "repolens", "compare", "--repo", "app", "--config", str(config), *store]
    proc = subprocess.run(
        [*run, "--path", "shop/billing.py", "--json"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == [{"path": "shop/billing.py", "status": "modified"}]
    bad = subprocess.run([*run[:5], "nope", *run[6:], "--path", "x"], capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and bad.stderr.strip() == (
        "error: unknown repository 'nope': known repositories are app"
    )


def test_mcp_compare_branches_and_name_at_branch(branches):
    async def session() -> list:
        async with Client(build_server(_roots(branches), remote=True)) as client:
            return [
                await client.call_tool("compare_branches", {"repo": "app", "paths": ["shop/legacy.py"]}),
                await client.call_tool("find_symbol", {"name": "apply_coupon", "repo": "app@develop"}),
                await client.call_tool("find_symbol", {"name": "apply_coupon", "repo": "app@main"}),
                await client.call_tool("find_symbol", {"name": "apply_coupon", "repo": "app"}),
                await client.call_tool("compare_branches", {"repo": "app", "paths": ["../etc"]}),
                await client.call_tool("compare_branches", {"repo": "nope", "paths": ["shop"]}),
            ]

    compared, develop, main, ambiguous, outside, unknown = asyncio.run(session())
    text = compared.content[0].text
    assert not compared.is_error and "only_base     shop/legacy.py" in text
    assert "shop/coupons.py" in develop.content[0].text
    assert "shop/coupons.py" not in main.content[0].text
    assert ambiguous.is_error and ambiguous.content[0].text == (
        "repository app has several branches: pass one of app@main, app@develop"
    )
    assert outside.is_error and "inside the repository" in outside.content[0].text
    assert unknown.is_error and unknown.content[0].text == (
        "unknown repository 'nope': known repositories are app"
    )


def test_branches_whose_roots_name_a_store_share_one_database(make_repo, git, write_tree, pg_db, tmp_path):
    """``[roots] "app@main" = { path, store }``: both branches in one PostgreSQL
    database under their root names, indexed, compared and listed over MCP."""
    made = make_branches(make_repo, git, write_tree)
    config = tmp_path / "repolens.toml"
    config.write_text(
        f'[roots]\n"app@main" = {{ path = "{made.main}", store = "{pg_db.url}" }}\n'
        f'"app@develop" = {{ path = "{made.develop}", store = "{pg_db.url}" }}\n'
    )
    roots = load_serve_config(config_file=config, env={}).roots

    async def session() -> list:
        async with Client(build_server(roots, remote=True)) as client:
            return [
                await client.call_tool("index_repo", {"repo": "app@main"}),
                await client.call_tool("index_repo", {"repo": "app@develop"}),
                await client.call_tool("compare_branches", {"repo": "app", "paths": ["shop"]}),
                await client.call_tool("list_repositories", {}),
            ]

    try:
        results = asyncio.run(session())
    finally:
        readers.clear()
        close_pools()
    assert not any(r.is_error for r in results), [r.content[0].text for r in results]
    main, develop, compared, listing = (r.content[0].text for r in results)
    assert "reused" not in main
    assert "reused from sibling branches: 10 files, 10 chunks" in develop
    assert compared.splitlines()[0] == (
        "app: base main vs head develop; 13 files: 10 same, 1 modified, 1 only_head, 1 only_base"
    )
    assert "  app@develop: <app@develop> - 12 files, 12 chunks; updated " in listing
    with pg_db.connect() as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM repos ORDER BY key")]
    assert keys == ["app@develop", "app@main"]
    assert not (made.main / ".repolens").exists() and not (made.develop / ".repolens").exists()


def test_a_branch_asked_of_a_single_branch_repository_is_named_with_the_fix(branches):
    """It said "repository app has one branch configured: app", the root's key, not a branch."""
    with pytest.raises(NotFoundError) as plain:
        service.compare_branches(
            "app", {"app": branches.main}, EMPTY, base="develop", paths=["shop/billing.py"]
        )
    assert str(plain.value) == (
        "repository app has no branch 'develop' configured (one checkout, named without a branch): "
        'name each branch in the server config\'s [roots] ("app@BRANCH" = FOLDER) to compare them'
    )
    with pytest.raises(NotFoundError, match=r"no branch 'next' configured \(only main\)"):
        service.compare_branches("app", {"app@main": branches.main}, EMPTY, head="next", paths=["a.py"])


def test_mcp_compare_without_configured_roots_says_what_it_needs(branches, monkeypatch):
    """A local server of no config (it serves the current folder) said "several
    repositories are served: pass `repo`, one of " and an empty list."""
    monkeypatch.chdir(branches.main)

    async def session():
        async with Client(build_server()) as client:
            return await client.call_tool("compare_branches", {"paths": ["shop/billing.py"]})

    reply = asyncio.run(session())
    assert reply.is_error and reply.content[0].text == (
        "compare_branches compares the branches a server config names, and this server has none: "
        'serve with a config whose [roots] name each branch ("app@main" = FOLDER)'
    )
