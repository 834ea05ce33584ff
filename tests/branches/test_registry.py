"""The registry and list_repositories: indexed facts beside what the
registry says, names with and without a branch, unknown names."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from branch_fixtures import Branches, indexed, make_branches
from mcp import Client

from repolens import service
from repolens.branches.registry import load_registry
from repolens.errors import ConfigError
from repolens.server.config import load_serve_config
from repolens.server.tools import build_server

REGISTRY = """
[[repository]]
name = "app"
project = "shop"
base = "main"
head = "develop"
description = "The storefront"
url = "https://git.example.com/shop/app"

[[repository]]
name = "docs"
project = "handbook"
"""


@pytest.fixture
def branches(make_repo, git, write_tree, store_url) -> Branches:
    """Both branches indexed, in each store backend."""
    return indexed(make_branches(make_repo, git, write_tree))


def _text(result) -> str:
    return "\n".join(c.text for c in result.content)


def _config(tmp_path: Path, b: Branches, registry: str = "registry.toml") -> Path:
    (tmp_path / "registry.toml").write_text(REGISTRY)
    config = tmp_path / "repolens.toml"
    config.write_text(
        f'[roots]\n"app@main" = "{b.main}"\n"app@develop" = "{b.develop}"\n'
        f'lib = "{b.main / "shop"}"\n\n[registry]\npath = "{registry}"\n'
    )
    return config


def test_list_repositories_shows_branches_with_index_facts_and_registry_facts(branches, tmp_path: Path):
    config = load_serve_config(config_file=_config(tmp_path, branches), env={})
    assert list(config.roots) == ["app@main", "app@develop", "lib"]
    for root in config.roots.values():  # in a store, under the names the config gives them
        service.index_repo(root)

    async def session() -> list[str]:
        server = build_server(config.roots, remote=True, registry=config.registry)
        async with Client(server) as client:
            return [
                _text(await client.call_tool("list_repositories", {})),
                _text(await client.call_tool("list_repositories", {"project": "shop"})),
                _text(await client.call_tool("find_symbol", {"name": "apply_coupon", "repo": "app"})),
                _text(await client.call_tool("find_symbol", {"name": "x", "repo": "shop"})),
                await client.call_tool("list_repositories", {"project": "shoe"}),
            ]

    listing, shop, base_only, unknown, no_project = asyncio.run(session())
    lines = listing.splitlines()
    assert lines[0] == "2 repositories served, 1 more in the registry; showing 1-3"
    assert (
        lines[1]
        == "app (project shop; base main, head develop): The storefront <https://git.example.com/shop/app>"
    )
    assert lines[2].startswith("  app@main: <app@main> - 12 files, 12 chunks; updated ")
    assert lines[3].startswith("  app@develop: <app@develop> - 12 files, 12 chunks; updated ")
    assert lines[4].startswith("lib: <lib> - ") and lines[4].endswith("(branch main)")
    assert lines[5] == "docs (project handbook) - in the registry, not served"
    assert shop.splitlines()[0] == "1 repository served; showing 1-1" and "lib" not in shop
    # `app` alone is the registry's base branch, where apply_coupon does not exist yet.
    assert "shop/coupons.py" not in base_only
    assert unknown == "unknown repository 'shop': known repositories are app@main, app@develop, lib"
    # a project the registry does not know is said, as search_code's project:NAME says it
    assert no_project.is_error
    assert _text(no_project) == "no project 'shoe' in the registry: its projects are handbook, shop"


def test_a_name_without_registry_is_the_only_indexed_branch_else_an_error(branches, tmp_path: Path):
    third = tmp_path / "app-next"
    third.mkdir()

    async def call(roots) -> str:
        async with Client(build_server(roots, remote=True)) as client:
            return _text(await client.call_tool("find_symbol", {"name": "apply_coupon", "repo": "app"}))

    only_indexed = asyncio.run(call({"app@develop": branches.develop, "app@next": third}))
    assert "shop/coupons.py" in only_indexed
    both = asyncio.run(call({"app@main": branches.main, "app@develop": branches.develop}))
    assert both == "repository app has several branches: pass one of app@main, app@develop"


@pytest.mark.parametrize(
    ("content", "suffix", "needle"),
    [
        ('[[repository]]\nname = "a"\nowner = "me"\n', ".toml", "unknown key 'owner'"),
        ('[[repository]]\nname = "a"\n[[repository]]\nname = "a"\n', ".toml", "'a' is listed twice"),
        ('{"repositories": [{"name": "a b"}]}', ".json", "name must be 1-64 letters"),
        ("{not json", ".json", "is not valid JSON"),
        ('[[repository]]\nname = "a"\nbase = 1\n', ".toml", "base must be a string"),
    ],
)
def test_a_bad_registry_is_one_line_naming_the_entry(tmp_path: Path, content, suffix, needle):
    path = tmp_path / f"registry{suffix}"
    path.write_text(content)
    with pytest.raises(ConfigError, match=needle):
        load_registry(path)


def test_json_registry_and_a_missing_file(tmp_path: Path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"repositories": [{"name": "app", "base": "main", "project": "shop"}]}))
    assert load_registry(path).base_of("app") == "main"
    with pytest.raises(ConfigError, match=r"registry file .* does not exist"):
        load_registry(tmp_path / "nope.toml")
