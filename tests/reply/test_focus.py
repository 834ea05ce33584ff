"""Focused context: whole enclosing definitions, budgets, markers; get_chunk."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from repolens.budget import INDEXED_LINE_CHARS, line_cut_marker
from repolens.chunking.labels import repeated_header_lines
from repolens.errors import NotFoundError, PathError, UsageError
from repolens.index.build import build_index
from repolens.reply import focus
from repolens.reply.focus import NO_MATCH, FocusResult
from repolens.reply.stored import get_chunk
from repolens.search.query import parse_query
from repolens.settings import Settings
from repolens.store import open_store
from repolens.store.base import IndexReader
from repolens.tokens import tokenize


def crunch_source(n: int = 150) -> str:
    """A function long enough to be stored as two parts (the second repeats its header)."""
    lines = ["def crunch(values):", '    """Crunch the numbers."""', "    total = 0"]
    lines += [f"    total += values[{i}] * {i}" for i in range(n)]
    lines[20] = "    total += quasar(values)"
    lines[140] = "    total += pulsar(values)"
    lines.append("    return total")
    return "\n".join(lines) + "\n"


def registry_source(methods: int = 45) -> str:
    """A class too big for one chunk, with a class-level attribute and a method using it."""
    out = ["class Registry:", '    """Keeps handlers by name."""', "", "    nebula = {}", ""]
    for i in range(methods):
        out += [f"    def handler_{i:02d}(self, value):", f"        return value * {i}  # handler {i}", ""]
    out += ["    def find(self, name):", "        return self.nebula.get(name)", ""]
    return "\n".join(out)


CART = '''"""Shopping cart."""

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


def checkout(cart, payment):
    """Charge the payment for the cart."""
    amount = cart.total()
    if amount <= 0:
        raise ValueError("empty cart")
    receipt = payment.charge(amount)
    receipt.lines = list(cart.items)
    receipt.currency = "EUR"
    receipt.note = "thank you"
    return receipt
'''

PRICING = "\n".join(
    [
        "@cached(ttl=60)",
        "@traced",
        "def compute_price(",
        "    item,",
        "    quantity,",
        "    discount=0,",
        "):",
        '    """Price of a cart line."""',
        "    base = item.price * quantity",
        *[f"    base += {i}  # adjustment {i}" for i in range(40)],
        "    return apply_galaxy(base, discount)",
        "",
    ]
)

FOCUS_FILES: dict[str, str] = {
    "src/shop/cart.py": CART,
    "src/shop/pricing.py": PRICING,
    "src/shop/big.py": crunch_source(),
    "src/shop/registry.py": registry_source(),
    "pkg/store/store.go": """package store

// Store keeps items.
type Store struct {
\titems map[string]string
}

// Save stores a value and charges the payment.
func (s *Store) Save(key, value string) error {
\ts.items[key] = value
\treturn nil
}
""",
    "web/form.ts": """export class FormController {
  private items = 0;

  handleSubmit(event: Event): boolean {
    this.items += 1;
    return true;
  }
}
""",
    "notes/todo.txt": "\n".join("comet here" if i in (10, 90) else f"note line {i}" for i in range(1, 101))
    + "\n",
}


@pytest.fixture
def shop(make_repo) -> Iterator[IndexReader]:
    root = make_repo(FOCUS_FILES)
    # One chunk per definition, so chunk ids and ranges below are the
    # definitions' own (focus reads definitions from symbols either way).
    build_index(root, settings=Settings(chunk_merge_lines=2))

    reader = open_store(root).open_reader()
    yield reader
    reader.close()


def focused_context(reader: IndexReader, query: str, *, context_lines: int = 2, **bounds: int) -> FocusResult:
    """Focus on the index ``reader`` reads, ranked as the default settings
    say, with ``context_lines`` (the setting) around each matched line."""
    settings = Settings(context_lines=context_lines)
    return focus.focused_context(reader, Path(reader.meta()["root"]), query, settings, **bounds)


def _numbered(path: str, start: int, end: int) -> list[str]:
    lines = FOCUS_FILES[path].split("\n")
    return [f"{n}: {lines[n - 1]}" for n in range(start, end + 1)]


def _score(result: FocusResult, i: int = 0) -> str:
    return f"{result.rendered[i].block.score:.2f}"


def _shown_lines(result: FocusResult) -> list[tuple[str, int]]:
    out = []
    for r in result.rendered:
        for line in r.text.split("\n")[1:]:
            m = re.match(r"(\d+): ", line)
            if m:
                out.append((r.block.path, int(m.group(1))))
    return out


# -- blocks ----------------------------------------------------------------------


def test_match_shows_the_whole_enclosing_function_not_a_window(shop):
    result = focused_context(shop, "thank")
    assert result.text == "\n".join(
        [
            f"src/shop/cart.py:23-32 function checkout (score {_score(result)}) matched: 31",
            *_numbered("src/shop/cart.py", 23, 32),
        ]
    )


def test_several_matches_in_one_function_make_one_block(shop):
    result = focused_context(shop, "receipt")
    assert len(result.rendered) == 1
    block = result.rendered[0].block
    assert (block.start_line, block.end_line, block.qualname) == (23, 32, "checkout")
    assert block.matched == (28, 29, 30, 31, 32)
    assert result.text.split("\n")[0].endswith("matched: 28-32")


def test_match_in_top_level_code_shows_its_chunk(shop):
    result = focused_context(shop, "Decimal")
    assert result.text == "\n".join(
        [
            f"src/shop/cart.py:1-7 block (score {_score(result)}) matched: 3",
            *_numbered("src/shop/cart.py", 1, 7),
        ]
    )


def test_overlapping_windows_of_a_text_file_become_one_block(shop):
    result = focused_context(shop, "comet")
    assert [(r.block.start_line, r.block.end_line, r.block.kind) for r in result.rendered] == [
        (1, 100, "window")
    ]
    assert result.rendered[0].block.matched == (10, 90)
    assert result.text.split("\n")[1:] == _numbered("notes/todo.txt", 1, 100)


def test_small_class_absorbs_its_matching_methods(shop):
    result = focused_context(shop, "items", paths=["src/shop/cart.py"])
    refs = [r.block.ref() for r in result.rendered]
    assert "src/shop/cart.py:8-20 class Cart" in refs
    assert not any("Cart." in ref for ref in refs)
    cart = next(r for r in result.rendered if r.block.qualname == "Cart")
    assert cart.whole and cart.block.matched == (9, 12, 14, 15, 17, 20)


def test_big_class_keeps_its_method_as_a_separate_block_and_shows_no_line_twice(shop):
    result = focused_context(shop, "nebula")
    # both hold the word (the class defines it, the method reads it): their order is the model's
    assert sorted(r.block.ref() for r in result.rendered) == [
        "src/shop/registry.py:1-142 class Registry",
        "src/shop/registry.py:141-142 method Registry.find",
    ]
    (registry,) = [r for r in result.rendered if r.block.ref().endswith("class Registry")]
    assert not registry.whole and registry.block.matched == (4,)
    assert registry.text.split("\n")[1:] == [
        "1: class Registry:",
        '2:     """Keeps handlers by name."""',
        "3: ",
        "4:     nebula = {}",
        "5: ",
        "6:     def handler_00(self, value):",
        "... (lines 7-142 omitted)",
        registry.text.split("\n")[-1],
    ]
    assert re.fullmatch(
        r"\.\.\. \(budget: \d+ chars omitted; use read_snippet src/shop/registry\.py 7 142 to expand\)",
        registry.text.split("\n")[-1],
    )
    shown = _shown_lines(result)
    assert len(shown) == len(set(shown))


def test_split_function_is_reassembled_without_repeated_headers(shop):
    parts = [s.chunk for s in shop.chunks_of_file("src/shop/big.py")]
    assert len(parts) >= 2 and any(repeated_header_lines(c) for c in parts)
    result = focused_context(shop, "pulsar", max_chars=20_000)
    (rendered,) = result.rendered
    assert rendered.whole
    assert rendered.text.split("\n") == [
        f"src/shop/big.py:1-154 function crunch (score {_score(result)}) matched: 141",
        *_numbered("src/shop/big.py", 1, 154),
    ]
    assert rendered.text.count("def crunch(values):") == 1


def test_no_match(shop):
    result = focused_context(shop, "xylophone")
    assert result.text == NO_MATCH == "No matching definitions found."
    assert result.rendered == () and result.omitted == ()


# -- restriction to paths ----------------------------------------------------------


def test_paths_restrict_matches_to_files_and_folders(shop):
    folder = focused_context(shop, "items", paths=["pkg/"])
    assert {r.block.path for r in folder.rendered} == {"pkg/store/store.go"}
    file = focused_context(shop, "items", paths=["web/form.ts"])
    assert [r.block.ref() for r in file.rendered] == ["web/form.ts:1-8 class FormController"]
    both = focused_context(shop, "items", paths=["web/form.ts", "./pkg"], max_files=5)
    assert {r.block.path for r in both.rendered} == {"web/form.ts", "pkg/store/store.go"}


def test_absolute_path_inside_the_root_is_accepted(shop):
    root = Path(shop.meta()["root"])
    result = focused_context(shop, "items", paths=[str(root / "pkg")])
    assert result.paths == ("pkg",)
    assert focused_context(shop, "items", paths=["pkg", "."]).paths == ()  # "." is the whole repository


def test_paths_are_read_as_a_search_reads_its_path_filter(shop):
    """``src//x`` and ``src/./x`` (a shell's or a compiler's spellings) name
    what ``search --path`` takes them for; focus said nothing was indexed there."""
    for spelled in ("web//form.ts", "web/./form.ts", "./web/form.ts/", "web\\form.ts"):
        assert focused_context(shop, "items", paths=[spelled]).paths == ("web/form.ts",), spelled


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("lib", "no indexed file is under 'lib': pass a folder or file the index holds as paths"),
        (
            "src/shop/cart",
            "no indexed file is under 'src/shop/cart'; the nearest indexed path is 'src/shop/cart",
        ),
        ("../x", "path '../x' contains '..': pass a path inside the repository root"),
        ("/etc", "path '/etc' is outside the repository root"),
    ],
)
def test_bad_paths_are_refused_with_the_fix(shop, path, message):
    with pytest.raises(PathError) as err:
        focused_context(shop, "items", paths=[path])
    assert str(err.value).startswith(message)


def test_paths_are_a_few_files_or_folders(shop):
    """Each is looked up in the index: a list of thousands is refused, not read."""
    assert focused_context(shop, "items", paths=["web"] * 100).paths == ("web",)
    with pytest.raises(UsageError, match=r"^paths: at most 100 files or folders, got 101"):
        focused_context(shop, "items", paths=["web"] * 101)


# -- budgets -----------------------------------------------------------------------


def _trailer(result: FocusResult, why: str = "did not fit") -> str:
    n = len(result.omitted)
    refs = ", ".join(b.ref() for b in result.omitted)
    return f"... {n} more block{'s' if n > 1 else ''} {why}: {refs}"


def test_max_files_budget_lists_the_other_files_in_the_trailer(shop):
    result = focused_context(shop, "items", max_files=1)
    assert len({r.block.path for r in result.rendered}) == 1
    assert {b.path for b in result.omitted} >= {"pkg/store/store.go", "web/form.ts"}
    assert result.text.split("\n\n")[-1] == _trailer(result, "past max_files=1")


def test_blocks_per_file_budget(shop):
    result = focused_context(shop, "items", paths=["pkg"], blocks_per_file=1)
    assert len(result.rendered) == 1
    (left,) = result.omitted
    assert result.text.split("\n\n")[-1] == f"... 1 more block past blocks_per_file=1: {left.ref()}"
    assert left.ref() in (
        "pkg/store/store.go:3-6 struct Store",
        "pkg/store/store.go:8-12 method (*Store).Save",
    )


def test_max_blocks_budget(shop):
    result = focused_context(shop, "items", max_blocks=2, max_files=10)
    assert len(result.rendered) == 2
    assert len(result.omitted) >= 2
    # not "did not fit": the count budget left them out, and raising it shows them
    assert result.text.split("\n\n")[-1] == _trailer(result, "past max_blocks=2")


def test_char_budget_trims_a_definition_to_its_signature_and_matched_lines(shop):
    result = focused_context(shop, "quasar", max_chars=600)
    (rendered,) = result.rendered
    shown = {1, 19, 20, 21, 22, 23}
    lines = FOCUS_FILES["src/shop/big.py"].split("\n")
    dropped = sum(len(f"{n}: {lines[n - 1]}") + 1 for n in range(1, 155) if n not in shown)
    assert result.text == "\n".join(
        [
            f"src/shop/big.py:1-154 function crunch (score {_score(result)}) matched: 21",
            "1: def crunch(values):",
            "... (lines 2-18 omitted)",
            *_numbered("src/shop/big.py", 19, 23),
            "... (lines 24-154 omitted)",
            f"... (budget: {dropped} chars omitted; use read_snippet src/shop/big.py 2 154 to expand)",
        ]
    )
    assert not rendered.whole and not rendered.budget_cut


def test_trimmed_definition_keeps_a_multi_line_signature_after_decorators(shop):
    result = focused_context(shop, "galaxy", max_chars=700, context_lines=1)
    lines = PRICING.split("\n")
    shown = {3, 4, 5, 6, 7, 49, 50}
    dropped = sum(len(f"{n}: {lines[n - 1]}") + 1 for n in range(1, 51) if n not in shown)
    assert result.text == "\n".join(
        [
            f"src/shop/pricing.py:1-50 function compute_price (score {_score(result)}) matched: 50",
            "... (lines 1-2 omitted)",
            *_numbered("src/shop/pricing.py", 3, 7),
            "... (lines 8-48 omitted)",
            *_numbered("src/shop/pricing.py", 49, 50),
            f"... (budget: {dropped} chars omitted; use read_snippet src/shop/pricing.py 1 50 to expand)",
        ]
    )


def test_budget_marker_has_the_packets_wording(shop):
    from repolens.budget import budget_marker

    result = focused_context(shop, "quasar", max_chars=600)
    block = result.rendered[0].block
    marker = result.text.split("\n")[-1]
    dropped = int(re.search(r"budget: (\d+) chars", marker).group(1))
    assert marker == budget_marker(block.path, 2, block.end_line, dropped)


def test_block_too_big_even_trimmed_is_cut_keeping_the_strongest_matches(shop):
    # "values" is on every line of crunch; "quasar" only on line 21.
    result = focused_context(shop, "quasar values", max_chars=500, paths=["src/shop/big.py"])
    (rendered,) = result.rendered
    assert rendered.budget_cut and len(result.text) <= 500
    lines = result.text.split("\n")
    assert lines[1] == "1: def crunch(values):"
    assert "21:     total += quasar(values)" in lines
    # the read named by the marker starts at the first line not shown
    first_hidden = next(
        int(re.match(r"\.\.\. \(lines? (\d+)", x).group(1)) for x in lines if x.startswith("... (line")
    )
    marker = re.fullmatch(
        r"\.\.\. \(budget: \d+ chars omitted; use read_snippet (\S+) (\d+) (\d+) to expand\)", lines[-1]
    )
    assert marker is not None
    assert marker.groups() == ("src/shop/big.py", str(first_hidden), "154")


@pytest.mark.parametrize("max_chars", [200, 300, 500, 600, 800])
def test_the_smallest_reply_shows_the_best_blocks_best_line(shop, max_chars: int):
    """Never only counts: the best block shows its strongest matched line at
    any budget (at 500 the reply was "12 more blocks did not fit" alone; at
    600 the best block was "(lines 23-32 omitted)" with no line)."""
    for query in ("items payment total", "quasar values", "handler nebula"):
        result = focused_context(shop, query, max_chars=max_chars, max_files=5, max_blocks=10)
        assert len(result.text) <= max_chars, query
        first = result.rendered[0]
        lines = FOCUS_FILES[first.block.path].split("\n")
        tokens = parse_query(query).tokens
        best = min(first.block.matched, key=lambda n: (-len(tokens & set(tokenize(lines[n - 1]))), n))
        assert f"\n{best}: " in first.text, (query, first.text)
        assert result.text.startswith(first.text), query


def test_the_smallest_reply_is_the_best_line_and_the_read_of_the_whole_block(shop):
    result = focused_context(shop, "items payment total", max_chars=200, max_files=5, max_blocks=10)
    lines = CART.split("\n")
    assert result.text == "\n".join(
        [
            f"src/shop/cart.py:23-32 function checkout (score {_score(result)}) matched: 23-25, 28-29",
            "23: def checkout(cart, payment):",
            f"... (budget: {sum(len(f'{n}: {lines[n - 1]}') + 1 for n in range(24, 33))} chars omitted; "
            "use read_snippet src/shop/cart.py 23 32 to expand)",
        ]
    )


def test_a_line_the_index_holds_only_the_start_of_is_marked_as_the_packet_marks_it(make_repo):
    """A line over 6,000 characters (data, a minified bundle) is indexed by
    its first 6,000: focus showed that start with no marker, as if it were
    the whole line. It now carries the packet's marker and its read, in a
    definition shown whole or at the smallest budgets (the line cut shorter,
    the marker whole)."""
    blob = 'BLOB = "zeppelin ' + "x" * 9000 + '"'
    numbers = ", ".join(str(i) for i in range(2500))
    table = f'def quasar_table():\n    """The quasar table."""\n    return [\n        {numbers},\n    ]\n'
    root = make_repo({"data.py": blob + "\n", "table.py": table})
    build_index(root)
    reader = open_store(root).open_reader()
    try:
        marker = "... (line 1 goes on past the 6000 chars the index holds; "
        marker += "use read_snippet data.py 1 1 to read it)"
        whole = focused_context(reader, "zeppelin", max_chars=20_000)
        assert whole.text.split("\n")[1:] == [f"1: {blob[:INDEXED_LINE_CHARS]}", marker]
        assert marker == line_cut_marker("data.py", 1, INDEXED_LINE_CHARS)

        body = focused_context(reader, "quasar table", max_chars=20_000).text.split("\n")
        assert body[4:7] == [
            f"4: {table.split(chr(10))[3][:INDEXED_LINE_CHARS]}",
            line_cut_marker("table.py", 4, INDEXED_LINE_CHARS),
            "5:     ]",
        ]

        for max_chars in (200, 300, 6100, 6150):
            small = focused_context(reader, "zeppelin", max_chars=max_chars).text
            assert len(small) <= max_chars, max_chars
            _header, line, last = small.split("\n")
            held = f"1: {blob[:INDEXED_LINE_CHARS]}"
            assert line == held or (line.endswith("x...") and held.startswith(line[:-3])), max_chars
            assert last == marker, max_chars

        chunk_id = whole.rendered[0].block.chunk_ids[0]
        assert get_chunk(reader, chunk_id).rendered.split("\n")[-1] == marker  # the stored chunk too
    finally:
        reader.close()


def test_blocks_after_a_budget_cut_go_to_the_trailer(shop):
    result = focused_context(shop, "items payment", max_chars=700, max_files=5, max_blocks=10)
    assert len(result.text) <= 700
    assert result.omitted
    trailer = result.text.split("\n\n")[-1].splitlines()
    assert trailer[0].startswith("... ") and " more blocks did not fit: " in trailer[0]
    assert trailer[1].startswith("... ") and " more blocks past blocks_per_file=3" in trailer[1]
    assert sum(int(line.split()[1]) for line in trailer) == len(result.omitted)


def test_reply_never_exceeds_budget_and_never_repeats_a_line(shop):
    queries = ["items", "payment", "values", "nebula handler", "comet note", "quasar pulsar total"]
    for seed in range(60):  # one index, many budgets
        rng = random.Random(seed)
        max_chars = rng.randint(200, 9000)
        result = focused_context(
            shop,
            rng.choice(queries),
            max_chars=max_chars,
            max_files=rng.randint(1, 4),
            blocks_per_file=rng.randint(1, 4),
            max_blocks=rng.randint(1, 8),
            context_lines=rng.randint(0, 3),
        )
        assert len(result.text) <= max_chars, seed
        shown = _shown_lines(result)
        assert len(shown) == len(set(shown)), seed
        for r in result.rendered:
            text = FOCUS_FILES[r.block.path].split("\n")
            for line in r.text.split("\n")[1:]:
                m = re.match(r"(\d+): (.*)", line, re.S)
                if m:
                    assert text[int(m.group(1)) - 1] == m.group(2), seed
                else:
                    assert line.startswith("... ("), seed


# -- output --------------------------------------------------------------------------


def test_json_lists_blocks_with_chunk_ids_and_omitted(shop):
    result = focused_context(shop, "items", max_blocks=1)
    data = json.loads(json.dumps(result.to_json()))
    (block,) = data["blocks"]
    assert block["text"] == result.rendered[0].text
    assert {
        "path",
        "start_line",
        "end_line",
        "kind",
        "qualname",
        "matched_lines",
        "chunk_ids",
        "whole",
    } <= set(block)
    assert block["chunk_ids"]
    assert [o["path"] for o in data["omitted"]] == [b.path for b in result.omitted]


def test_arguments_are_checked(shop):
    with pytest.raises(UsageError, match="query is empty"):
        focused_context(shop, "  ")
    with pytest.raises(UsageError, match="max_files must be between 1 and 50, got 0"):
        focused_context(shop, "items", max_files=0)
    with pytest.raises(UsageError, match="max_chars must be between 200 and 1000000"):
        focused_context(shop, "items", max_chars=50)


# -- get_chunk -----------------------------------------------------------------------


def test_get_chunk_returns_the_stored_chunk_by_the_id_focus_gave(shop):
    result = focused_context(shop, "thank")
    (chunk_id,) = result.rendered[0].block.chunk_ids
    view = get_chunk(shop, chunk_id)
    stored = shop.chunk_by_id(chunk_id).chunk
    assert view.text == stored.text
    assert (view.path, view.start_line, view.end_line, view.kind, view.qualname) == (
        "src/shop/cart.py",
        23,
        32,
        "function",
        "checkout",
    )
    assert view.render() == "\n".join(
        [
            f"src/shop/cart.py:23-32 function checkout [python] chunk {chunk_id}",
            *_numbered("src/shop/cart.py", 23, 32),
        ]
    )
    assert view.to_json()["text"] == stored.text


def test_get_chunk_of_a_split_part_numbers_its_repeated_header(shop):
    part = next(s.chunk for s in shop.chunks_of_file("src/shop/big.py") if repeated_header_lines(s.chunk))
    view = get_chunk(shop, part.id, max_chars=100_000)
    assert view.text == part.text and view.header_lines == 1 and view.header_start == 1
    assert view.render().split("\n") == [
        f"src/shop/big.py:{part.start_line}-154 function crunch [python] chunk {part.id}",
        "1: def crunch(values):",
        f"... (lines 2-{part.start_line - 1} omitted)",
        *_numbered("src/shop/big.py", part.start_line, 154),
    ]


def test_get_chunk_is_bounded_with_the_truncation_marker(shop):
    part = shop.chunks_of_file("src/shop/big.py")[0].chunk
    view = get_chunk(shop, part.id, max_chars=300)
    lines = view.render().split("\n")
    assert view.truncated and len(view.render()) <= 300
    last_shown = int(lines[-2].split(":")[0])
    assert lines[-1] == (
        f"... (truncated at 300 chars; use read_snippet src/shop/big.py {last_shown + 1} {part.end_line} "
        "to expand)"
    )


def test_get_chunk_unknown_id(shop):
    """The errors say where ids come from as each front asks for them: MCP
    has get_focused_context give no id, and search_code takes no --json."""
    with pytest.raises(NotFoundError) as err:
        get_chunk(shop, "0123456789abcdef")
    assert str(err.value) == (
        "no chunk with id 0123456789abcdef in this index: ids come from JSON replies "
        "(search_code mode=json; repolens search or focus --json); the index may have been rebuilt"
    )
    with pytest.raises(UsageError) as empty:
        get_chunk(shop, "")
    assert str(empty.value) == (
        "chunk id is empty: pass an id from a JSON reply "
        "(search_code mode=json; repolens search or focus --json)"
    )
