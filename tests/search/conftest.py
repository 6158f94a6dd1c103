"""Fixtures for search tests: real embedded PostgreSQL + pgvector, the real local model, and a
fake OpenAI-compatible embedding server on loopback (the one thing that would leave the
machine in a real deployment)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh


@pytest.fixture
def index():
    """Embed the given entries now (as the worker would) and recount word statistics."""

    def run(*entries):
        outcomes = entries_embed(entry_ids=[e.pk for e in entries])
        lexeme_stats_refresh()
        return outcomes

    return run


def hashed_vector(text: str, dim: int) -> list[float]:
    """A bag-of-words vector: texts sharing words point the same way (enough for tests)."""
    vec = np.zeros(dim, dtype=np.float64)
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = np.linalg.norm(vec)
    return (vec / norm if norm else vec).tolist()


class FakeEmbeddingServer:
    def __init__(self) -> None:
        self.dim = 384
        self.fail_after: int | None = None  # answer 503 after this many requests
        self.delay = 0.0  # seconds each answer takes (a model at work)
        self.requests: list[dict] = []
        self.in_flight = self.most_in_flight = 0  # requests being answered at once
        lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                with lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay)
                    self.answer(body)
                finally:
                    with lock:
                        server.in_flight -= 1

            def answer(self, body):
                if server.fail_after is not None and len(server.requests) > server.fail_after:
                    self.send_response(503)
                    self.end_headers()
                    self.wfile.write(b"overloaded")
                    return
                dim = body.get("dimensions") or server.dim
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": hashed_vector(t, dim)}
                    for i, t in enumerate(texts)
                ]
                payload = json.dumps({"object": "list", "data": data, "model": body["model"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # A short poll: shutdown() waits for it, at the end of every test that uses the server.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server():
    server = FakeEmbeddingServer()
    yield server
    server.close()


@pytest.fixture
def http_provider_settings(settings, fake_server):
    settings.CAIRN_EMBEDDING_PROVIDER = "http"
    settings.CAIRN_EMBEDDING_URL = fake_server.url
    settings.CAIRN_EMBEDDING_MODEL = "fake-embed"
    settings.CAIRN_EMBEDDING_API_KEY = "secret-key"
    return settings
