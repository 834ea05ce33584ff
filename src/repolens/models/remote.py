"""An OpenAI-compatible embeddings endpoint: llama.cpp server, Ollama, vLLM.

``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the
answer's ``data[i].embedding`` vectors are put in ``index`` order and
L2-normalised here (not every server normalises). Uses the standard library's
``urllib``: the ``httpx`` import name is not available in this environment
and one POST per batch needs nothing more.

The base URL is left out of ``identity``: the same model behind another host
or port gives the same vectors. The model name is in it, so name quantised
variants distinctly on the server (Ollama tags do).
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence

import numpy as np

from repolens.errors import EmbedderError
from repolens.models.base import l2_normalise, prefix_tag
from repolens.settings import environ

DEFAULT_API_KEY_ENV = "REPOLENS_EMBED_API_KEY"
DEFAULT_BATCH_SIZE = 32
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_TOKENS = 512

# The server truncates (or refuses) by its own token count, which we cannot
# see; cutting texts to this many characters per token first keeps requests
# under the limit for code, which runs ~3-4 characters per token.
CHARS_PER_TOKEN = 3


class OpenAIEmbedder:
    """An :class:`~repolens.models.base.Embedder` over an HTTP endpoint.

    No request is made until the first embedding, or until ``dim`` is asked
    for without being configured (then one probe text is embedded).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        dim: int | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        timeout: float = DEFAULT_TIMEOUT,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EmbedderError(
                f"embed.base_url={base_url!r} is not an http(s) URL; use e.g. http://127.0.0.1:8080/v1"
            )
        if not model:
            raise EmbedderError("embed.model is empty; set it to the model name the server serves")
        if batch_size < 1 or timeout <= 0 or max_tokens < 1:
            raise EmbedderError(
                "embed.batch_size, embed.timeout and embed.max_tokens must be positive; fix the config"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = _api_key(api_key_env)
        self._dim = dim
        self._max_tokens = max_tokens
        self.batch_size = batch_size
        self.timeout = timeout
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return (
            f"openai:{self.model}:dim={self.dim}:max={self._max_tokens}"
            f":{prefix_tag(self.query_prefix, self.document_prefix)}"
        )

    @property
    def name(self) -> str:
        return f"{self.model} (at {self.base_url})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            with self._lock:
                if self._dim is None:
                    self._dim = int(self._post(["dim probe"]).shape[1])
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.document_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        limit = self._max_tokens * CHARS_PER_TOKEN
        texts = [t[:limit] if t else " " for t in texts]  # some servers reject ""
        parts = [self._post(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.concatenate(parts)
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise EmbedderError(
                f"embedding endpoint {self.base_url} returned {out.shape[1]}-d vectors, "
                f"expected {self._dim}; "
                "fix embed.dim or embed.model"
            )
        return out

    def _post(self, batch: list[str]) -> np.ndarray:
        url = f"{self.base_url}/embeddings"
        body = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc.read(2000))
            raise EmbedderError(
                f"embedding endpoint {url} answered HTTP {exc.code}: {detail}; {_http_fix(exc.code)}"
            ) from exc
        except TimeoutError as exc:
            raise EmbedderError(
                f"embedding endpoint {url} did not answer within {self.timeout:g}s; "
                "check the server or raise embed.timeout"
            ) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise EmbedderError(
                    f"embedding endpoint {url} did not answer within {self.timeout:g}s; "
                    "check the server or raise embed.timeout"
                ) from exc
            raise EmbedderError(
                f"cannot reach embedding endpoint {self.base_url}: {_reason_text(reason)}; "
                "start the server or set embed.provider=onnx"
            ) from exc
        return self._parse(url, payload, len(batch))

    def _parse(self, url: str, payload: bytes, expected: int) -> np.ndarray:
        try:
            data = json.loads(payload)["data"]
            rows = sorted(data, key=lambda item: item.get("index", 0))
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbedderError(
                f"embedding endpoint {url} did not return OpenAI-style {{'data': [{{'embedding': ...}}]}} "
                f"JSON; check that embed.base_url ends with the API root (e.g. /v1)"
            ) from exc
        if vectors.ndim != 2 or len(vectors) != expected:
            raise EmbedderError(
                f"embedding endpoint {url} returned {len(vectors)} vectors for {expected} inputs; "
                f"check that embed.model={self.model} is an embedding model"
            )
        if not np.all(np.isfinite(vectors)):
            raise EmbedderError(f"embedding endpoint {url} returned non-finite numbers; check the server")
        return l2_normalise(vectors)


def _api_key(env_name: str | None) -> str | None:
    if env_name is None:
        return environ(DEFAULT_API_KEY_ENV) or None
    value = environ(env_name)
    if not value:
        raise EmbedderError(
            f"environment variable {env_name} (embed.api_key_env) is not set; "
            "export it or unset embed.api_key_env"
        )
    return value


def _error_detail(body: bytes) -> str:
    """The message of an OpenAI-style (``{"error": {"message": ...}}``) or
    Ollama-style (``{"error": "..."}``) error body, else the body's start."""
    text = body.decode("utf-8", "replace")
    try:
        error = json.loads(text)["error"]
        message = error["message"] if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return message[:300]
    except (ValueError, KeyError, TypeError):
        pass
    return text[:300] or "(empty body)"


def _reason_text(reason: object) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return "unknown host"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def _http_fix(code: int) -> str:
    if code in (401, 403):
        return f"set the API key in ${DEFAULT_API_KEY_ENV} or the variable named by embed.api_key_env"
    if code == 404:
        return "check embed.base_url (it should end with the API root, e.g. /v1) and embed.model"
    if code == 413:
        return "lower embed.max_tokens or embed.batch_size"
    return "check the server's log"
