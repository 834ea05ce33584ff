"""Symbol lookup: match tiers, ranking, bounded output, suggestions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from repolens.errors import PathError, UsageError
from repolens.index.build import build_index
from repolens.roles import path_role
from repolens.search.symbols import find_symbols, split_qualified
from repolens.store import open_store
from repolens.store.base import IndexReader

SHOP_FILES: dict[str, str] = {
    "src/shop/cart.py": '''"""Shopping cart."""

from decimal import Decimal

MAX_ITEMS = 50


class Cart:
    """A cart of items."""

    def __init__(self):
        self.items = []

    def add_item(self, item, quantity=1):
        if len(self.items) >= MAX_ITEMS:
            raise ValueError("cart is full")
        self.items.append((item, quantity))

    def total(self):
        return sum(item.price * quantity for item, quantity in self.items)


def parse_url(url):
    scheme, _, rest = url.partition("://")
    return scheme, rest
''',
    "src/shop/errors.py": '''class Timeout(Exception):
    """Raised when the shop backend is too slow."""
''',
    "pkg/store/store.go": """package store

const Timeout = 5

// Store keeps items.
type Store struct {
\titems map[string]string
}

// Save stores a value.
func (s *Store) Save(key, value string) error {
\ts.items[key] = value
\treturn nil
}

func NewStore() *Store {
\treturn &Store{items: map[string]string{}}
}

func ParseURL(raw string) string {
\treturn raw
}
""",
    "web/form.ts": """export class FormController {
  private count = 0;

  handleSubmit(event: Event): boolean {
    this.count += 1;
    return true;
  }
}

export function parseURL(url: string): URL {
  return new URL(url);
}
""",
    "tests/test_cart.py": """from src.shop.cart import Cart


def add_item(cart, item):
    cart.add_item(item)


def test_total():
    assert Cart().total() == 0
""",
    "docs/api.md": "# API\n\n## add_item\n\nAdds an item to the cart.\n",
}


@pytest.fixture
def open_index() -> Iterator:
    """``open_index(root)``: build the index of ``root`` and open it; closed after the test."""
    opened: list[IndexReader] = []

    def make(root: Path) -> IndexReader:
        build_index(root)
        reader = open_store(root).open_reader()
        opened.append(reader)
        return reader

    yield make
    for reader in opened:
        reader.close()


@pytest.fixture
def shop(make_repo, open_index) -> IndexReader:
    return open_index(make_repo(SHOP_FILES))


def _summary(result) -> list[tuple[str, str, str]]:
    return [(m.qualname, m.path, m.tier) for m in result.matches]


# -- tiers ---------------------------------------------------------------------


def test_exact_then_case_insensitive_then_separator_insensitive(shop):
    result = find_symbols(shop, "parseURL")
    assert _summary(result) == [
        ("parseURL", "web/form.ts", "exact"),
        ("ParseURL", "pkg/store/store.go", "case-insensitive"),
        ("parse_url", "src/shop/cart.py", "separator-insensitive"),
    ]


def test_snake_case_query_finds_camel_case_definition(shop):
    result = find_symbols(shop, "handle_submit")
    assert _summary(result) == [("FormController.handleSubmit", "web/form.ts", "separator-insensitive")]


@pytest.mark.parametrize("query", ["Store.Save", "(*Store).Save", "Store::Save", "store.Store.Save"])
def test_qualified_names_match_go_receiver_methods(shop, query):
    result = find_symbols(shop, query)
    assert _summary(result) == [("(*Store).Save", "pkg/store/store.go", "qualified")]


def test_qualified_name_can_start_with_the_module_path(shop):
    assert _summary(find_symbols(shop, "store.NewStore")) == [("NewStore", "pkg/store/store.go", "qualified")]
    assert _summary(find_symbols(shop, "cart.Cart.add_item")) == [
        ("Cart.add_item", "src/shop/cart.py", "qualified")
    ]


def test_qualified_lookup_matches_parts_case_insensitively_and_prefers_exact_spelling(make_repo, open_index):
    handle = open_index(
        make_repo(
            {
                "a/store.py": "class store:\n    def save(self):\n        pass\n",
                "b/store.py": "class Store:\n    def save(self):\n        pass\n",
            }
        )
    )
    result = find_symbols(handle, "Store.save")
    assert _summary(result) == [
        ("Store.save", "b/store.py", "qualified"),
        ("store.save", "a/store.py", "qualified"),
    ]


def test_partial_qualifier_matches_the_end_of_a_longer_part(shop):
    result = find_symbols(shop, "Controller.handleSubmit")
    assert _summary(result) == [("FormController.handleSubmit", "web/form.ts", "qualified-partial")]
    result = find_symbols(shop, "shop.Cart.add_item")  # skips the module part "cart"
    assert _summary(result) == [("Cart.add_item", "src/shop/cart.py", "qualified-partial")]


def test_unfinished_name_with_qualifier_is_a_prefix_match(shop):
    assert _summary(find_symbols(shop, "Cart.add_it")) == [("Cart.add_item", "src/shop/cart.py", "prefix")]


def test_prefix_then_substring_only_when_no_name_matches(shop):
    result = find_symbols(shop, "handle")
    assert _summary(result) == [("FormController.handleSubmit", "web/form.ts", "prefix")]
    result = find_symbols(shop, "submit")
    assert _summary(result) == [("FormController.handleSubmit", "web/form.ts", "substring")]
    # "Store" has exact matches, so names that merely start with it are not listed
    assert [m.tier for m in find_symbols(shop, "Store").matches] == ["exact"]


def test_a_trailing_star_adds_the_names_starting_with_it_after_the_name_itself(make_repo, open_index):
    reader = open_index(
        make_repo(
            {
                "src/zorb.py": "def zorb():\n    return 1\n\n\ndef zorbular():\n    return zorb()\n",
                "src/helpers.py": "class ZorbHelper:\n    pass\n",
            }
        )
    )
    assert _summary(find_symbols(reader, "zorb")) == [("zorb", "src/zorb.py", "exact")]
    assert _summary(find_symbols(reader, "zorb*")) == [
        ("zorb", "src/zorb.py", "exact"),
        ("zorbular", "src/zorb.py", "prefix"),
        ("ZorbHelper", "src/helpers.py", "prefix"),
    ]
    assert find_symbols(reader, "zorb*").render().startswith("3 symbols match 'zorb*':")
    assert _summary(find_symbols(reader, "zorbu")) == [("zorbular", "src/zorb.py", "prefix")]
    assert _summary(find_symbols(reader, "zorb.zorb*")) == [
        ("zorb", "src/zorb.py", "qualified"),
        ("zorbular", "src/zorb.py", "prefix"),
    ]


def test_markdown_sections_match_by_heading_path(shop):
    assert _summary(find_symbols(shop, "API > add_item")) == [("API > add_item", "docs/api.md", "qualified")]


# -- ranking -------------------------------------------------------------------


def test_definitions_rank_before_constants_in_the_same_tier(shop):
    result = find_symbols(shop, "Timeout")
    assert [(m.kind, m.path) for m in result.matches] == [
        ("class", "src/shop/errors.py"),
        ("constant", "pkg/store/store.go"),
    ]


def test_source_ranks_before_tests_and_docs(shop):
    result = find_symbols(shop, "add_item")
    assert [(m.qualname, m.kind, m.path) for m in result.matches] == [
        ("Cart.add_item", "method", "src/shop/cart.py"),
        ("add_item", "function", "tests/test_cart.py"),
        ("API > add_item", "section", "docs/api.md"),
    ]


# -- filters -------------------------------------------------------------------


def test_kind_path_and_language_narrow_the_lookup(shop):
    assert _summary(find_symbols(shop, "Timeout", kind="constant")) == [
        ("Timeout", "pkg/store/store.go", "exact")
    ]
    assert _summary(find_symbols(shop, "add_item", path="tests/")) == [
        ("add_item", "tests/test_cart.py", "exact")
    ]
    assert _summary(find_symbols(shop, "add_item", path="./tests/test_cart.py")) == [
        ("add_item", "tests/test_cart.py", "exact")
    ]
    assert _summary(find_symbols(shop, "parseurl", language="Go")) == [
        ("ParseURL", "pkg/store/store.go", "case-insensitive")
    ]


def test_path_filter_matches_whole_folder_names_only(shop):
    assert find_symbols(shop, "add_item", path="tests").matches
    with pytest.raises(PathError) as err:
        find_symbols(shop, "add_item", path="test")
    assert str(err.value) == (
        "no indexed file is under 'test'; the nearest indexed path is 'tests': "
        "pass a folder or file the index holds as path"
    )
    result = find_symbols(shop, "no_such_name", path="tests")
    assert result.render() == "No symbol matches 'no_such_name' (path=tests)."


# -- output --------------------------------------------------------------------


def test_render_lists_location_kind_tier_and_signature(shop):
    assert find_symbols(shop, "save").render() == "\n".join(
        [
            "1 symbol match 'save':",
            "pkg/store/store.go:10-14 method (*Store).Save [go, case-insensitive]",
            "    func (s *Store) Save(key, value string) error",
        ]
    )


def test_parent_is_shown_when_the_qualified_name_does_not_say_it(shop):
    (match,) = find_symbols(shop, "Save").matches
    assert match.parent == "Store"
    assert "in Store" not in match.render()


def _many_repo(make_repo, n: int) -> Path:
    body = "\n\n".join(
        f"class Worker{i:02d}:\n    def process(self, job):\n        return job" for i in range(n)
    )
    return make_repo({"src/workers.py": body + "\n"})


def test_limit_says_how_many_more_matches_exist(make_repo, open_index):
    handle = open_index(_many_repo(make_repo, 30))
    result = find_symbols(handle, "process", limit=2)
    assert result.render() == "\n".join(
        [
            "30 symbols match 'process':",
            "src/workers.py:2-3 method Worker00.process [python, exact]",
            "    def process(self, job)",
            "src/workers.py:6-7 method Worker01.process [python, exact]",
            "    def process(self, job)",
            "... 28 more matches; narrow with kind= or path=",
        ]
    )
    assert (result.total, len(result.matches), result.more) == (30, 2, 28)


def test_render_never_exceeds_max_chars_and_counts_what_it_left_out(make_repo, open_index):
    handle = open_index(_many_repo(make_repo, 30))
    for max_chars in (200, 250, 333, 500, 1000, 4000, 100_000):
        result = find_symbols(handle, "process", limit=30, max_chars=max_chars)
        text = result.render()
        assert len(text) <= max_chars
        shown = text.count("[python, exact]")
        assert shown == len(result.matches)
        last = text.splitlines()[-1]
        if shown < 30:
            assert last == f"... {30 - shown} more matches; narrow with kind= or path="
        else:
            assert last == "    def process(self, job)"


def test_json_carries_the_shown_matches_and_the_count(shop):
    data = json.loads(json.dumps(find_symbols(shop, "add_item", limit=1).to_json()))
    assert data["total"] == 3 and data["more"] == 2
    assert data["matches"] == [
        {
            "name": "add_item",
            "qualname": "Cart.add_item",
            "kind": "method",
            "path": "src/shop/cart.py",
            "start_line": 14,
            "end_line": 17,
            "signature": "def add_item(self, item, quantity=1)",
            "parent": "Cart",
            "language": "python",
            "tier": "exact",
        }
    ]


# -- no match ------------------------------------------------------------------


def test_no_match_suggests_near_misses(shop):
    result = find_symbols(shop, "hadnleSubmit")
    assert result.matches == ()
    assert result.render() == "\n".join(
        [
            "No symbol matches 'hadnleSubmit'.",
            "Did you mean: FormController.handleSubmit (method, web/form.ts:4)?",
        ]
    )


def test_suggestions_are_distinct_and_at_most_three(make_repo, open_index):
    files = {f"m{i}.py": f"def parse_value{i}(x):\n    return x\n" for i in range(6)}
    handle = open_index(make_repo(files))
    result = find_symbols(handle, "pasre_value1")
    assert [s.qualname for s in result.suggestions][:1] == ["parse_value1"]
    assert 1 <= len(result.suggestions) <= 3
    assert len({s.qualname for s in result.suggestions}) == len(result.suggestions)


def test_no_match_without_near_misses(shop):
    assert find_symbols(shop, "zzqx").render() == "No symbol matches 'zzqx'."


def test_qualified_typo_suggests_the_qualified_name(shop):
    result = find_symbols(shop, "Cart.add_iten")
    assert result.matches == ()
    assert [s.qualname for s in result.suggestions][:1] == ["Cart.add_item"]


# -- arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "symbol name is empty: pass a name such as parse_url or Store.save"),
        ("   ", "symbol name is empty: pass a name such as parse_url or Store.save"),
        ("x" * 201, "symbol name is 201 chars; the limit is 200: pass one name such as parse_url"),
        ("...", "symbol name '...' has no letters or digits: pass a name such as parse_url or Store.save"),
        ("::", "symbol name '::' has no letters or digits: pass a name such as parse_url or Store.save"),
    ],
)
def test_unusable_names_raise_a_usage_error_with_the_fix(shop, name, message):
    with pytest.raises(UsageError) as err:
        find_symbols(shop, name)
    assert str(err.value) == message


def test_bad_kind_and_bounds_are_usage_errors(shop):
    with pytest.raises(UsageError, match="unknown kind 'spell': use one of block, class"):
        find_symbols(shop, "save", kind="spell")
    with pytest.raises(UsageError, match="limit must be between 1 and 200"):
        find_symbols(shop, "save", limit=0)
    with pytest.raises(UsageError, match="max_chars must be between 200 and 1000000"):
        find_symbols(shop, "save", max_chars=10)


def test_split_qualified_reads_separators_of_many_languages():
    assert split_qualified("(*Store).Save") == ("Store", "Save")
    assert split_qualified("Store::save") == ("Store", "save")
    assert split_qualified("Foo#bar") == ("Foo", "bar")
    assert split_qualified("Map<K, List<V>>.get") == ("Map", "get")
    assert split_qualified("parse_url()") == ("parse_url",)
    assert split_qualified("Install > From source") == ("Install", "Fromsource")


# -- path roles ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/repolens/service.py", "source"),
        ("tests/test_api.py", "test"),
        ("pkg/store/store_test.go", "test"),
        ("web/app.spec.ts", "test"),
        ("src/main/java/FooTest.java", "test"),
        ("conftest.py", "test"),
        ("docs/guide.md", "doc"),
        ("README", "doc"),
        ("CHANGELOG.md", "doc"),
        ("vendor/github.com/x/y.go", "vendored"),
        ("web/node_modules/react/index.js", "vendored"),
        ("api/v1/service_pb2.py", "generated"),
        ("api/v1/service.pb.go", "generated"),
        ("static/app.min.js", "generated"),
        ("examples/quickstart.py", "example"),
        ("pyproject.toml", "config"),
        ("Dockerfile", "config"),
        ("webpack.config.js", "config"),
        ("vendor/tests/x_test.go", "vendored"),
    ],
)
def test_path_role(path, role):
    assert path_role(path) == role


def test_a_small_budget_shows_the_best_match_without_its_signature_when_that_fits(make_repo, open_index):
    signature = "def handle_submit(form, store, request, response, *, validate=True, remember=True):"
    files = {f"src/app/part{i}/handlers.py": f"{signature}\n    return {i}\n" for i in range(4)}
    result = find_symbols(open_index(make_repo(files)), "handle_submit", max_chars=200)
    assert result.render().splitlines() == [
        "4 symbols match 'handle_submit':",
        "src/app/part0/handlers.py:1-2 function handle_submit [python, exact]",
        "... 3 more matches; narrow with kind= or path=",
    ]
    assert [m.path for m in result.matches] == ["src/app/part0/handlers.py"]
