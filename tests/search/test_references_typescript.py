"""find_references in TypeScript.

Each test builds a small repository and its real index (both stores:
``store_url``) and reads ``find_references``'s reply: a name re-exported by
``export { x }`` and imported with a ``.ts`` extension.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repolens import service
from repolens.index.build import build_index


def uses(text: str) -> list[str]:
    """The ``path`` and ``scope line`` lines of a references reply, before the name matches."""
    head = text.split("name matches (same name")[0]
    return [
        line.strip() for line in head.splitlines()[1:] if line.strip() and not line.startswith("also defined")
    ]


@pytest.fixture
def repo(tmp_path: Path, write_tree, store_url) -> Path:
    root = tmp_path / "repo"
    write_tree(root, {"README.md": "fixture\n"})
    return root


def test_an_imported_name_exported_again_and_imported_with_a_ts_extension(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "deno/utils/html.ts": "export const raw = (s: string) => s\n",
            "deno/helper/html/index.ts": (
                "import { raw } from '../../utils/html.ts'\n"  # 1
                "\n"
                "export { raw }\n"
            ),
            "deno/jsx/base.ts": (
                "import { raw } from '../helper/html/index.ts'\n"  # 1
                "export function render() {\n"
                "  return raw('x')\n"
                "}\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("raw", repo).text) == [
        "deno/helper/html/index.ts",
        "(module) 1: import { raw } from '../../utils/html.ts'",
        "(module) 3: export { raw }",
        "deno/jsx/base.ts",
        "(module) 1: import { raw } from '../helper/html/index.ts'",
        "render 3: return raw('x')",
    ]
