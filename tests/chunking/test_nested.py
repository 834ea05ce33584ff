"""Functions defined inside functions are symbols, named under their holder
(repolens.chunking.nested): find_symbol finds them, and a search for the
name puts the chunk that defines them first."""

from __future__ import annotations

from pathlib import Path

from conftest import MakeRepo
from repolens import service
from repolens.chunking.dispatch import chunk_file
from repolens.store.handles import readers

PYTHON = """import functools


def deco(f):
    @functools.wraps(f)
    def wrapper(*a):
        def inner():
            return f(*a)
        return inner()
    return wrapper


@deco
def top(x):
    class Local:
        def method(self):
            return 1
    return Local()


class Store:
    def save(self):
        def encode(y):
            return y
        return encode(1)
"""

TYPESCRIPT = """export const compose = (middleware: any[]) => {
  return (context: any, next?: any) => {
    let index = -1
    return dispatch(0)
    async function dispatch(i: number): Promise<any> {
      index = i
      return middleware[i](context, () => dispatch(i + 1))
    }
  }
}
"""

RUST = """fn outer() -> i32 {
    fn inner(x: i32) -> i32 { x + 1 }
    inner(1)
}
"""


def _symbols(path: str, text: str, language: str) -> list[tuple[str, str, int, int, str, str]]:
    return [
        (s.qualname, s.kind, s.start_line, s.end_line, s.signature, s.parent)
        for s in chunk_file(path, text, language).symbols
    ]


def test_a_function_inside_a_function_is_a_symbol_under_it_at_any_depth():
    symbols = _symbols("app.py", PYTHON, "python")
    assert ("deco.wrapper", "function", 6, 9, "def wrapper(*a)", "deco") in symbols
    assert ("deco.wrapper.inner", "function", 7, 8, "def inner()", "deco.wrapper") in symbols
    assert ("Store.save.encode", "function", 23, 24, "def encode(y)", "Store.save") in symbols
    # a local class's method is not named as the function's own; the chunked ones stay as they were
    assert not any("method" in qual for qual, *_ in symbols)
    assert [qual for qual, *_ in symbols][:4] == ["deco", "top", "Store", "Store.save"]
    ts = _symbols("compose.ts", TYPESCRIPT, "typescript")
    assert ts[-1] == (
        "compose.dispatch",
        "function",
        5,
        8,
        "async function dispatch(i: number): Promise<any>",
        "compose",
    )
    assert ("outer::inner", "function", 2, 2, "fn inner(x: i32) -> i32", "outer") in _symbols(
        "lib.rs", RUST, "rust"
    )


def test_a_function_a_grammar_handler_classifies_is_found_too():
    """Kotlin's and Lua's functions are a handler's, not a plain node kind's."""
    kotlin = "fun outer(x: Int): Int {\n    fun inner(y: Int): Int = y + 1\n    return inner(x)\n}\n"
    lua = "local function outer(x)\n  local function inner(y)\n    return y\n  end\n  return inner(x)\nend\n"
    assert [q for q, *_ in _symbols("a.kt", kotlin, "kotlin")] == ["outer", "outer.inner"]
    assert [q for q, *_ in _symbols("a.lua", lua, "lua")] == ["outer", "outer.inner"]


def test_the_chunks_are_the_same_as_without_them():
    """A nested function stays inside its holder's chunk: no chunk of its own."""
    chunks = chunk_file("app.py", PYTHON, "python").chunks  # small definitions, merged: one chunk
    spans = [(c.kind, c.qualname, c.start_line, c.end_line) for c in chunks]
    assert spans == [("block", "deco, top, Store", 1, 25)]


def test_find_symbol_and_a_search_for_the_name_reach_a_nested_function(make_repo: MakeRepo):
    root: Path = make_repo(
        {
            "src/compose.ts": TYPESCRIPT,
            "src/dispatcher.ts": "export function route(dispatch: string) {\n  return dispatch.length\n}\n",
        }
    )
    service.index_repo(root)
    try:
        found = service.find_symbol("dispatch", root).render()
        assert "compose.dispatch" in found and "src/compose.ts:5" in found
        hits = service.search_code("dispatch", root, mode="json").text
        assert hits.index('"src/compose.ts"') < hits.index('"src/dispatcher.ts"')
        # its uses inside its holder are its references, and a walk goes on through the holder
        refs = service.find_references("compose.dispatch", root).text
        assert "2 references in 1 file" in refs and "compose 7: return middleware[i]" in refs
        impact = service.impact("compose.dispatch", root).text
        assert "1. src/compose.ts:1 compose (function) <- call at line 4" in impact
    finally:
        readers.clear()
