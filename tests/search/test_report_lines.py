"""A pasted bug report is answered with the lines it must change (issue 37): the
function its traceback stopped in, or its regression test calls, should come
first, though its words favour another. The shipped model does not do that
yet: strict xfails, which pass the day a model does."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MakeRepo
from repolens import service
from repolens.search.query import parse_query
from repolens.search.ranking import RankingOptions, search_index
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.handles import readers


def _cart() -> str:
    """``coerce`` (the function to change: no word of the report), ``add``
    (which the reproduction calls) and ``cart_total`` (which repeats the
    report's words), each long enough to be a chunk of its own."""
    coerce = "def coerce(text):\n" + "".join(
        f"    step_{i} = text.strip()[{i}:]  # digits and sign\n" for i in range(32)
    )
    coerce += "    return int(text.strip())\n"
    add = "def add(cart, name, text):\n" + "".join(
        f"    cart.names_{i} = name  # keep the name\n" for i in range(30)
    )
    add += "    cart.lines.append((name, coerce(text)))\n"
    total = (
        "def cart_total(cart):\n"
        '    """The total of a cart: every line\'s quantity times its price.\n\n'
        "    An empty cart totals zero; a line whose quantity is empty counts as one,\n"
        '    and a cart total never breaks on an empty quantity or an empty price.\n    """\n'
        "    total = 0\n"
    )
    total += "".join(
        f"    # an empty quantity in line {i} of the cart adds one item to the total\n"
        f"    total += cart.lines[{i}].price\n"
        for i in range(18)
    )
    total += "    return total\n"
    return f'"""The shopping cart."""\n\n\n{coerce}\n\n{add}\n\n{total}'


REPORT = """Empty quantity breaks the cart total

Adding a line with an empty quantity to the cart breaks the cart total.

```python
add(cart, "apple", "")
```

Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "src/shop/cart.py", line 71, in add
  File "src/shop/cart.py", line 37, in coerce
ValueError: invalid literal for int() with base 10: ''
"""


@pytest.fixture
def shop(make_repo: MakeRepo) -> Path:
    files = {"src/shop/cart.py": _cart()}
    files |= {f"src/shop/util{i}.py": f"def helper_{i}(x):\n    return x + {i}\n" for i in range(6)}
    root = make_repo(files)
    service.index_repo(root)
    yield root
    readers.clear()


def _first(root: Path, ranking: str, report: str = REPORT) -> str:
    reader = open_store(root).open_reader()
    try:
        options = RankingOptions.from_settings(load_settings(root))._replace(ranking=ranking)
        outcome = search_index(reader, parse_query(report), options=options)
        return outcome.hits[0].chunk.name
    finally:
        reader.close()


@pytest.mark.xfail(
    strict=True,
    reason="issue 37's 'Done when' test, not met: the final model ranks cart_total first; it never splits "
    "on the traceback's columns (446 of the 13,002 mined searches have an innermost frame among their "
    "candidates, a changed function for about a third of them)",
)
def test_the_function_a_traceback_stopped_in_comes_first_where_words_favour_another(shop: Path):
    assert _first(shop, "tuned") == "add"  # the symbol leg's name and the report's words win
    assert _first(shop, "learned") == "coerce"


# The same report with the regression test its fix would add: it calls the function to change.
REGRESSION = """Empty quantity breaks the cart total

Adding a line with an empty quantity to the cart breaks the cart total: an
empty quantity should count as one.

```python
def test_empty_quantity_counts_as_one():
    assert coerce("") == 1
    assert coerce("  ") == 1
```

fails with ValueError: invalid literal for int() with base 10: ''
"""


@pytest.mark.xfail(
    strict=True,
    reason="issue 37's 'Done when' test, not met: the final model ranks cart_total first and coerce fourth "
    "(subject_terms, the title's words, weigh most; defines_called fires on 10 candidates of a mined issue "
    "question on average, a changed function for 4% of them)",
)
def test_the_function_a_regression_test_calls_comes_first_where_words_favour_another(shop: Path):
    assert _first(shop, "tuned", REGRESSION) == "coerce"  # the symbol leg's name wins
    assert _first(shop, "learned", REGRESSION) == "coerce"
