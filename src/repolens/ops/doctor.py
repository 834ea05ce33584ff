"""``repolens doctor``: check every leg of the engine and say what to fix.

Each check runs the real thing (open the index, run a search, load the
embedder and embed, probe the reranker) and reports ``ok``, ``off`` (not
configured: not a fault) or ``FAIL`` with a one-line fix. The exit status
is non-zero when anything failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repolens.budget import counted
from repolens.errors import ConfigError, RepolensError
from repolens.models.embed_config import load_embed_config
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.handles import readers

# Paraphrases should embed closer to each other than to an unrelated text.
_SAME_A = "open a file and read its lines"
_SAME_B = "read the lines of a text file"
_OTHER = "the colour of the submit button is blue"


@dataclass(frozen=True)
class Check:
    name: str
    state: str  # ok, off, FAIL
    detail: str

    def line(self) -> str:
        return f"{self.state:<4} {self.name}: {self.detail}"


@dataclass
class Diagnosis:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.state != "FAIL" for c in self.checks)

    def render(self) -> str:
        tail = "all checks passed" if self.ok else "some checks failed: fix them as said above"
        return "\n".join([*(c.line() for c in self.checks), tail])

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def diagnose(root: str | Path | None, index_dir: str | Path | None = None) -> Diagnosis:
    """Every check for the index of ``root`` (in ``index_dir``); ``RootError``
    when ``root`` is not a directory."""
    from repolens import service

    d = Diagnosis()
    try:
        store = open_store(root, index_dir)  # (which reads the settings file's [store] table)
        settings = load_settings(store.root)
    except ConfigError as exc:  # a broken settings file is the first thing to fix: a check, not a crash
        d.checks.append(Check("settings", "FAIL", str(exc)))
        return d
    meta: dict[str, str] = {}
    # 1. the index: present, readable, current
    try:
        status = service.index_status(store.root, index_dir=index_dir)
        meta = readers.get(store).meta()
        fresh = (
            "up to date"
            if not status.changed
            else f"{counted(status.changed, 'file')} changed since: run `repolens index`"
        )
        state = "ok" if not status.changed else "FAIL"
        d.checks.append(Check("index", state, f"{status.files} files, {status.chunks} chunks; {fresh}"))
    except RepolensError as exc:
        d.checks.append(Check("index", "FAIL", str(exc)))
        return d
    # 2. the lexical leg answers
    try:
        reply = service.search_code("main function", store.root, index_dir=index_dir, auto_index=False)
        d.checks.append(
            Check("lexical", "ok", f"a probe search returned {counted(len(reply.packet.rendered), 'hit')}")
        )
    except RepolensError as exc:
        d.checks.append(Check("lexical", "FAIL", str(exc)))
    # 3. the dense leg: the model loads and gives sane vectors
    d.checks.append(_check_embedder(store.root, settings.vectors, meta))
    # 4. the reranker
    d.checks.append(_check_reranker(store.root))
    # 5. the history leg: what it can draw on (replies do not repeat why it is off)
    d.checks.append(_check_history(status.history, settings.history_weight))
    return d


def _check_history(history: str, weight: float) -> Check:
    """``history`` is the status line (:func:`repolens.index.status.history_line`)."""
    if weight <= 0:
        return Check("history", "off", "history_weight is 0")
    if history.startswith("none"):
        return Check("history", "off", f"{history}: searches rank without past commits")
    return Check("history", "ok", history)


def _check_embedder(root: Path, vectors_on: bool, meta: dict[str, str]) -> Check:
    if not vectors_on and not meta.get("embed_identity"):
        return Check(
            "dense", "off", "vectors are off (set vectors = true and run `repolens index` to use them)"
        )
    from repolens.models import make_embedder

    try:
        embedder = make_embedder(load_embed_config(root))
        if embedder is None:
            return Check("dense", "off", "embed.provider is none")
        a, b, other = embedder.embed_documents([_SAME_A, _SAME_B, _OTHER])
    except RepolensError as exc:
        return Check("dense", "FAIL", str(exc))
    norms = np.linalg.norm(np.stack([a, b, other]), axis=1)
    if not np.all(np.isfinite(norms)) or not np.allclose(norms, 1.0, atol=1e-3):
        return Check(
            "dense", "FAIL", f"{embedder.name} gives vectors that are not unit length: check the model"
        )
    same, apart = float(a @ b), float(a @ other)
    if same <= apart:
        return Check(
            "dense",
            "FAIL",
            f"{embedder.name} scores paraphrases {same:.2f} <= unrelated {apart:.2f}: "
            "wrong model or tokenizer",
        )
    indexed = meta.get("embed_identity", "")
    if indexed and indexed != embedder.identity:
        return Check(
            "dense",
            "FAIL",
            f"the index holds vectors of another model or setting than {embedder.name} "
            f"({indexed}, not {embedder.identity}): run `repolens index --rebuild`",
        )
    if not indexed:
        return Check(
            "dense", "FAIL", f"{embedder.name} works but the index has no vectors: run `repolens index`"
        )

    return Check("dense", "ok", f"{embedder.name}: paraphrases {same:.2f} > unrelated {apart:.2f}")


def _check_reranker(root: Path) -> Check:
    from repolens.models.rerank import make_reranker, probe
    from repolens.models.rerank_config import load_rerank_config

    try:
        config = load_rerank_config(root)
        if config.provider == "none":
            return Check("rerank", "off", "no reranker configured ([rerank] provider = local, path = ...)")
        encoder = make_reranker(config)
        if encoder is None:
            return Check("rerank", "off", "no reranker configured")
        on, off = probe(encoder)
    except RepolensError as exc:
        return Check("rerank", "FAIL", str(exc))
    if on <= off:
        return Check("rerank", "FAIL", f"on-topic {on:.2f} <= off-topic {off:.2f}: wrong model or tokenizer")
    return Check("rerank", "ok", f"{encoder.identity}: on-topic {on:.2f} > off-topic {off:.2f}")
