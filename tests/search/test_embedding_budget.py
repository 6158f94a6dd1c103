"""One entry costs the model a bounded time: text without spaces no longer makes one giant chunk,
and past CAIRN_EMBED_MAX_TOKENS an entry's later chunks are left to full text (issue 18: a body
of 168,000 `[` was one chunk that held the only worker, and the mirror behind it, for minutes)."""

import pytest

from knowledge.models import EntryChunk
from knowledge.search.chunking import WORD_CHARS, chunk_text, estimated_tokens
from knowledge.search.providers import get_provider
from knowledge.services.embeddings import entries_embed
from tests.factories import EntryFactory


@pytest.mark.parametrize("body", ["[" * 8000, "漢字" * 5000, "https://example.org/" + "a" * 9000])
def test_text_without_spaces_is_cut_into_bounded_chunks_and_nothing_is_lost(body):
    chunks = chunk_text(body, size=200, overlap=40)
    assert len(chunks) > 1
    assert max(len(c.text) for c in chunks) <= 200 * WORD_CHARS
    assert "".join(c.text for c in chunks) == body  # cut apart, glued back, no space added


def test_long_words_stay_whole_inside_a_chunk():
    body = "see " + "x" * 100 + " and " + "y" * 40 + " then."
    assert [c.text for c in chunk_text(body, size=200, overlap=40)] == [body]


def test_punctuation_counts_as_tokens():
    prose = "The kettle is descaled every month, after the office closes. " * 20
    assert estimated_tokens("[" * 1000) > 3 * estimated_tokens("a" * 1000)
    assert 0.2 * len(prose) < estimated_tokens(prose) < 0.4 * len(prose)


class Counting:
    """The real model, counting what it is asked to read."""

    def __init__(self):
        self.real, self.calls = get_provider(), []
        self.name = self.real.name

    def embed_passages(self, texts):
        self.calls.append(sum(estimated_tokens(t) for t in texts))
        return self.real.embed_passages(texts)


@pytest.mark.django_db
def test_a_huge_body_embeds_only_up_to_the_token_budget(project, settings):
    settings.CAIRN_EMBED_MAX_TOKENS, settings.CAIRN_CHUNK_WORDS = 600, 20  # chunks of 320 `[`
    entry = EntryFactory(project=project, title="Junk", body="[" * 20_000)
    model = Counting()
    assert entries_embed(entry_ids=[entry.pk], provider=model) == {entry.pk: "embedded"}
    assert len(model.calls) == 1 and 320 <= model.calls[0] <= 600
    stored = EntryChunk.objects.filter(entry=entry)
    assert 1 <= stored.count() < len(chunk_text(entry.body, size=20, overlap=5))


@pytest.mark.django_db
def test_entries_are_grouped_into_calls_within_the_budget(project, settings):
    settings.CAIRN_EMBED_MAX_TOKENS = 150
    entries = [EntryFactory(project=project, title=f"E{i}", body="word, " * 60) for i in range(3)]
    model = Counting()
    outcomes = entries_embed(entry_ids=[e.pk for e in entries], provider=model)
    assert set(outcomes.values()) == {"embedded"}
    assert len(model.calls) == 3  # each entry ~120 tokens: two never share a 150-token call
