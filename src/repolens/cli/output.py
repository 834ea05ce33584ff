"""What a command prints: its text or JSON on stdout, progress and errors on stderr.

Kept apart from :mod:`repolens.cli`, which runs a command and so imports
both ways into one (:mod:`repolens.cli.reads`, :mod:`repolens.cli.commands`):
they print through this module and import nothing back.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# click.echo removes ANSI codes from a text for a stream that is not a
# terminal, and writes through a re-encoding wrapper to a stream set to ASCII
# (or one that is not a plain text stream): such a line goes through
# click.echo itself.
_ESC = "\x1b"


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` exactly as ``click.echo`` does, without importing click
    for the plain case (a text stream in a non-ASCII encoding, no escape code
    in the text)."""
    stream = sys.stderr if err else sys.stdout
    if "click" in sys.modules or _ESC in text or not _plain(stream):
        import click

        click.echo(text, err=err, nl=nl)
        return
    stream.write(text + "\n" if nl else text)
    stream.flush()


def _plain(stream: object) -> bool:
    """True when click.echo would write to ``stream`` as it is."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str) or getattr(stream, "errors", None) is None:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:  # click counts an unknown encoding as not ASCII
        return True


def progress(label: str, unit: str = "files") -> Callable[[int, int], None] | None:
    """A one-line progress display on stderr, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def show(done: int, total: int) -> None:
        pct = done * 100 // max(total, 1)
        if pct != last[0]:
            last[0] = pct
            echo(f"\r{label} {done}/{total} {unit} ({pct}%)", err=True, nl=False)
            if done >= total:
                echo("", err=True)

    return show


def emit(result: Any, as_json: bool) -> None:
    """Print a core result: its text, or its JSON form."""
    if as_json:
        import json

        echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        echo(result.render())
