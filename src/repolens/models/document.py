"""What gets embedded for a chunk: chosen for meaning, not raw windows.

A small embedder reads only its first ~128 word pieces, and raw code spends
them on punctuation and indentation. The styles:

``code``           the chunk text as it is (the baseline);
``header``         where and what: path words, kind, qualified name,
                   signature and doc comment;
``header+idents``  the header, then the distinct words of the identifiers
                   the chunk uses (``parse_url`` -> ``parse url``), in order
                   of first use: a bag of the chunk's vocabulary;
``header+code``    the header, then the start of the code.

Every style is cut at ``MAX_CHARS`` (the model truncates again at its own
token limit).
"""

from __future__ import annotations

import re

from repolens.chunking import Chunk
from repolens.tokens import STOPWORDS, split_identifier

MAX_CHARS = 1200
STYLES = ("code", "header", "header+idents", "header+code")
_RUN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_WORDS = re.compile(r"[A-Za-z0-9]+")


def _header(chunk: Chunk) -> str:
    path_words = " ".join(_PATH_WORDS.findall(chunk.path.rsplit(".", 1)[0]))
    parts = [path_words]
    if chunk.qualname:
        name_words = " ".join(split_identifier(chunk.qualname.replace(".", " ").replace("::", " ")))
        parts.append(f"{chunk.kind} {chunk.qualname} ({name_words})")
    if chunk.signature:
        parts.append(chunk.signature.strip())
    if chunk.doc:
        parts.append(" ".join(chunk.doc.split())[:400])
    return "\n".join(p for p in parts if p)


def identifier_words(text: str, limit: int = 120) -> list[str]:
    """Distinct lowercase words of the identifiers in ``text``, in order."""
    seen: dict[str, None] = {}
    for run in _RUN.findall(text):
        for word in split_identifier(run):
            if len(word) > 1 and not word.isdigit() and word not in STOPWORDS and word not in seen:
                seen[word] = None
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)


def embedding_text(chunk: Chunk, style: str = "header+idents") -> str:
    if style == "code":
        text = chunk.text
    elif style == "header":
        text = _header(chunk)
    elif style == "header+idents":
        text = _header(chunk) + "\n" + " ".join(identifier_words(chunk.text))
    elif style == "header+code":
        text = _header(chunk) + "\n" + chunk.text
    else:
        raise ValueError(f"unknown embedding style {style!r}; use one of {', '.join(STYLES)}")
    return text[:MAX_CHARS]
