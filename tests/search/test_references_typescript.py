"""find_references in TypeScript: re-exports, callbacks as scopes.

Each test builds a small repository and its real index (both stores:
``store_url``) and reads ``find_references``'s reply: a name re-exported by
``export { x }`` and imported with a ``.ts`` extension; a local of one
callback that does not hide an imported name in another.
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


def test_a_callback_s_local_does_not_hide_an_imported_name_in_another_callback(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "src/accepts.ts": "export function accepts(c: unknown): string {\n  return ''\n}\n",
            "src/accepts.test.ts": (
                "import { accepts } from './accepts'\n"  # 1
                "describe('a', () => {\n"
                "  const accepts = ['text/html']\n"
                "  expect(accepts).toEqual([])\n"
                "})\n"  # 5
                "describe('b', () => {\n"
                "  const result = accepts({})\n"
                "  test('c', (accepts: number) => accepts + 1)\n"
                "})\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("accepts", repo).text) == [
        "src/accepts.test.ts",
        "(module) 1: import { accepts } from './accepts'",
        "(module) 7: const result = accepts({})",
    ]
