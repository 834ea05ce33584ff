"""The learned ranking's features within a file (search/pinpoint): which function a question is about."""

from __future__ import annotations

from repolens.chunking import Chunk
from repolens.search.pinpoint import PINPOINT_FEATURES, Frame, pinpoint_columns, question_marks
from repolens.search.query import parse_query

PARSER = Chunk(
    "src/app/parser.py", 10, 20, "def parse_header(text):\n    return text.split(':')\n", "python",
    kind="function", name="parse_header", qualname="parse_header", signature="def parse_header(text)",
)  # fmt: skip
RENDER = Chunk(
    "src/app/parser.py", 22, 40, "def render(fields):\n    # an empty header renders as an empty header\n"
    "    return ':'.join(fields)\n", "python", kind="function", name="render", qualname="render",
    signature="def render(fields)",
)  # fmt: skip


def test_a_traceback_gives_its_frames_and_a_reproduction_its_calls():
    marks = question_marks(
        "Empty header\n\n```python\nparse_header('')\nprint(x)\n```\n\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/site-packages/app/parser.py", line 12, in parse_header\n'
        "IndexError: list index out of range\n"
        "java.lang.IllegalStateException\n\tat com.acme.Store.save(Store.java:41)\n"
    )
    assert marks.called == {"parseheader", "save"}  # print is everyone's
    assert marks.frames == (
        Frame(("app", "parser.py"), 12, "parseheader", innermost=True),
        Frame(("store.java",), 41, "save", innermost=True),
    )


def test_the_called_function_the_frame_stops_in_and_the_title_words_are_told_apart():
    question = (
        "parse_header fails on an empty header\n\n"
        "```python\nparse_header('')\n```\n\n"
        'Traceback (most recent call last):\n  File "app/parser.py", line 12, in parse_header\nIndexError\n'
    )
    query = parse_query(question)
    chunks = [PARSER, RENDER]
    held = [{t.token for t in query.terms if t.token in c.text.lower()} for c in chunks]
    cols = pinpoint_columns(query, chunks, lexical=[0.4, 1.0], tuned=[0.5, 1.0], held=held)
    assert set(cols) == set(PINPOINT_FEATURES)
    row = {name: (cols[name][0], cols[name][1]) for name in cols}
    assert row["defines_called"] == (1.0, 0.0)
    assert row["frame_function"] == (1.0, 0.0)
    assert row["frame_line"] == (1.0, 0.0)  # line 12 is inside parse_header's 10-20
    assert row["name_terms"][0] > row["name_terms"][1] == 0.0
    # within the file: render has the best lexical and tuned scores, parse_header trails
    assert row["file_lexical_share"] == (0.4, 1.0)
    assert row["file_place"][0] > row["file_place"][1]
