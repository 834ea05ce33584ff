"""Replies never cite line numbers that no longer hold without saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import relay_source
from repolens import service
from repolens.index.build import build_index
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _shown_lines(text: str) -> list[tuple[int, str]]:
    out = []
    for line in text.splitlines():
        head, sep, rest = line.partition(": ")
        if sep and head.isdigit():
            out.append((int(head), rest))
    return out


def test_moved_chunk_is_cited_at_its_current_lines(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_CHUNK_MERGE_LINES", "2")  # SessionStore is a chunk of its own
    build_index(sample_repo)

    session = sample_repo / "src/auth/session.py"
    session.write_text("# one\n# two\n# three\n" + session.read_text())
    reply = service.search_code("session expired", sample_repo, top_k=1)
    assert reply.notes == ("1 cited file changed since indexing; `repolens index` refreshes the index",)
    current = session.read_text().splitlines()
    shown = _shown_lines(reply.packet.rendered[0].text)
    assert shown, reply.text
    for number, text in shown:
        assert current[number - 1] == text
    assert "stale" not in reply.packet.rendered[0].text  # same text, true lines: nothing to warn about


def test_changed_definition_is_marked_stale_with_its_current_text(sample_repo: Path):
    build_index(sample_repo)
    session = sample_repo / "src/auth/session.py"
    session.write_text(
        session.read_text().replace('raise KeyError("session expired")', "return None  # expired")
    )
    reply = service.search_code("SessionStore load expired", sample_repo, top_k=1, explain=False)
    header = reply.packet.rendered[0].text.splitlines()[0]
    assert header.endswith("(stale: file changed since indexing)")
    assert "return None  # expired" in reply.packet.rendered[0].text
    current = session.read_text().splitlines()
    for number, text in _shown_lines(reply.packet.rendered[0].text):
        assert current[number - 1] == text


def test_deleted_file_is_marked(sample_repo: Path):
    build_index(sample_repo)
    (sample_repo / "src/auth/session.py").unlink()
    reply = service.search_code("SessionStore", sample_repo, top_k=1)
    assert reply.packet.rendered[0].text.splitlines()[0].endswith("(stale: file deleted since indexing)")
    assert reply.text.startswith("note: 1 cited file changed since indexing")


def test_a_file_no_longer_indexable_is_marked_so_not_deleted(sample_repo: Path):
    """A cited file that turned binary was marked "deleted since indexing"."""
    build_index(sample_repo)
    (sample_repo / "src/auth/session.py").write_bytes(b"\0binary")
    reply = service.search_code("SessionStore", sample_repo, top_k=1)
    assert _header(reply).endswith("(stale: file binary now, not indexable; lines as indexed)")


def test_definitions_packed_otherwise_after_an_edit_are_cited_where_they_are_now(make_repo):
    """Small definitions are packed into chunks; deleting the first one
    packed the rest otherwise, and a packed hit was "no longer in the file",
    cited at lines past its end."""
    body = ['"""Module doc."""']
    for f in range(6):
        steps = [
            f"    x = x + {i}  # flurb step {i}" if i % 4 == 0 else f"    x = x * {i}" for i in range(12)
        ]
        body += [f"def gadget_{f}(x):", f'    """Gadget {f} flurbs the gizmo."""', *steps, "    return x", ""]
    root = make_repo({"mod.py": "\n".join(body) + "\n"})
    build_index(root)
    lines = (root / "mod.py").read_text().split("\n")
    first, second = lines.index("def gadget_0(x):"), lines.index("def gadget_1(x):")
    (root / "mod.py").write_text("\n".join(lines[:first] + lines[second:]))
    now = (root / "mod.py").read_text().splitlines()
    reply = service.search_code("flurb gizmo", root)
    for block in reply.packet.rendered:
        assert "no longer in the file" not in block.text.splitlines()[0], block.text.splitlines()[0]
        for number, text in _shown_lines(block.text):
            assert number <= len(now) and now[number - 1] == text


def _header(reply) -> str:
    return reply.packet.rendered[0].text.splitlines()[0]


def test_an_edited_method_packed_after_a_long_one_is_found_again(make_repo):
    """Its chunk is the method's, so the stale hit cites the method as it is
    now, its ``def`` line included, and not the class's head."""
    root = make_repo({"relay.py": relay_source()})
    build_index(root)
    relay = root / "relay.py"
    relay.write_text(
        relay.read_text().replace(
            "        headers = message.headers\n", "        headers = dict(message.headers)\n"
        )
    )
    reply = service.search_code("credentials origin", root, top_k=1)
    assert _header(reply).startswith("relay.py:156-179 method Relay.refresh_credentials (score ")
    assert _header(reply).endswith("(stale: file changed since indexing)")
    shown = dict(_shown_lines(reply.packet.rendered[0].text))
    assert shown[157] == "    def refresh_credentials("
    assert "        headers = dict(message.headers)" in shown.values()
    current = relay.read_text().splitlines()
    assert all(current[n - 1] == text for n, text in shown.items())


def test_a_stale_part_of_a_split_method_is_found_again_at_that_part(make_repo):
    root = make_repo({"relay.py": relay_source()})
    build_index(root)
    relay = root / "relay.py"
    text = relay.read_text()
    relay.write_text(text.replace("self.step(120, message)", "self.step(120, message, tracing=True)"))
    reply = service.search_code("step 120 tracing", root, top_k=1)
    assert _header(reply).startswith(
        "relay.py:88-155 method Relay.forward (score "
    )  # the second part, not the first
    assert "            hops += self.step(120, message, tracing=True)" in reply.packet.rendered[0].text


def _head_after_an_edit(root: Path, path: str, old: str, new: str, question: str) -> str:
    """The first hit's header for ``question`` once ``old`` in ``path`` is ``new`` (indexed before)."""
    build_index(root)
    edited = root / path
    edited.write_text(edited.read_text().replace(old, new))
    return _header(service.search_code(question, root, top_k=1))


def test_a_definition_gone_from_the_file_says_so_instead_of_citing_other_code(make_repo):
    root = make_repo({"relay.py": relay_source()})
    head = _head_after_an_edit(
        root, "relay.py", "def refresh_credentials(", "def renew_credentials(", "refresh_credentials"
    )
    assert head.startswith("relay.py:156-179 method Relay.refresh_credentials (score ")
    assert head.endswith("(stale: definition no longer in the file; lines as indexed)")


def test_every_reply_citing_a_changed_file_says_so(sample_repo: Path):
    """symbols, refs, impact and focus cite the index's lines: when a file
    they cite changed since, a note names it (as a search's does), and a
    file only touched, not changed, is no cause for one."""
    build_index(sample_repo)
    note = "note: 1 cited file changed since indexing (src/auth/session.py): its lines may have moved"
    replies = lambda: {  # noqa: E731
        "symbols": service.find_symbol("SessionStore", sample_repo).text,
        "refs": service.find_references("SessionStore.save", sample_repo).text,
        "impact": service.impact("src/auth/session.py:15", sample_repo).text,
        "focus": service.focus("session expired", sample_repo).text,
    }
    session = sample_repo / "src/auth/session.py"
    before = replies()
    assert not any("changed since indexing" in text for text in before.values()), before
    session.write_text(session.read_text())  # touched: the same bytes
    assert replies() == before
    session.write_text("# one\n# two\n# three\n" + session.read_text())
    for name, text in replies().items():
        assert text.startswith(note), (name, text)
    small = service.find_symbol("SessionStore", sample_repo, max_chars=200).text
    assert small.startswith("note: cited files changed since indexing\n") and len(small) <= 200


def test_an_edited_cpp_header_named_h_is_read_again_as_cpp(make_repo):
    """The re-chunk of a changed file read a ``.h`` as C: a C++ header's
    method was "no longer in the file" (as C, the namespace is one function)."""
    root = make_repo(
        {"widget.h": "namespace app {\nstruct Widget final {\n  void draw() { paint_widget(1); }\n};\n}\n"}
    )
    head = _head_after_an_edit(root, "widget.h", "paint_widget(1)", "paint_widget(2)", "paint_widget")
    assert head.startswith("widget.h:1-5 module app (score ")
    assert head.endswith("(stale: file changed since indexing)")
