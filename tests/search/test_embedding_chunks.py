"""Re-embedding only what changed: each chunk keeps the hash of the text the model read, so an
edit costs the model the chunks whose text changed; the entry waits for its vectors meanwhile
and is still found by its words."""

import pytest

from knowledge.models import Entry, EntryChunk
from knowledge.search import SearchFilters, search_entries
from knowledge.services import EntryFields, entry_update
from knowledge.services.embeddings import chunk_hash, entries_embed
from tests.factories import EntryFactory


def sections(*texts: str) -> str:
    # Each section is long enough to be a chunk of its own (CAIRN_CHUNK_WORDS is 200).
    return "\n\n".join(f"## Part {i}\n\n" + (text + " ") * 60 for i, text in enumerate(texts))


def texts_sent(fake_server) -> list[str]:
    return [t for request in fake_server.requests for t in request["body"]["input"]]


@pytest.mark.django_db
def test_an_edit_re_embeds_only_the_chunks_whose_text_changed(
    actor, project, http_provider_settings, fake_server
):
    entry = EntryFactory(
        project=project,
        title="Runbook",
        body=sections("ovens preheat slowly", "kettles boil fast", "fridges hum nightly"),
    )
    assert entries_embed(entry_ids=[entry.pk]) == {entry.pk: "embedded"}
    first = list(EntryChunk.objects.filter(entry=entry).order_by("ordinal"))
    assert len(first) == 3 and len(texts_sent(fake_server)) == 3
    assert all(c.source_hash and len(c.source_hash) == 64 for c in first)

    entry_update(
        actor=actor,
        ref=entry.pk,
        fields=EntryFields(
            body=sections("ovens preheat slowly", "kettles whistle loudly", "fridges hum nightly")
        ),
    )
    fake_server.requests.clear()
    assert entries_embed(entry_ids=[entry.pk]) == {entry.pk: "embedded"}
    sent = texts_sent(fake_server)
    assert len(sent) == 1 and "kettles whistle loudly" in sent[0]
    after = list(EntryChunk.objects.filter(entry=entry).order_by("ordinal"))
    assert [c.pk for c in after][0::2] == [first[0].pk, first[2].pk]  # same rows, untouched
    assert after[1].pk != first[1].pk and "whistle" in after[1].text
    assert after[1].source_hash == chunk_hash(sent[0])

    # A rename changes what every chunk reads (the title is their context): all again.
    fake_server.requests.clear()
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(title="Kitchen runbook"))
    entries_embed(entry_ids=[entry.pk])
    assert len(texts_sent(fake_server)) == 3
    # force re-embeds everything, whatever the hashes say.
    fake_server.requests.clear()
    entries_embed(entry_ids=[entry.pk], force=True)
    assert len(texts_sent(fake_server)) == 3


@pytest.mark.django_db
def test_a_section_inserted_above_moves_the_chunks_below_without_re_embedding_them(
    actor, project, http_provider_settings, fake_server
):
    entry = EntryFactory(
        project=project, title="Log", body=sections("alpha beta gamma", "delta epsilon zeta")
    )
    entries_embed(entry_ids=[entry.pk])
    fake_server.requests.clear()
    body = sections("alpha beta gamma", "new middle words", "delta epsilon zeta")
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=body))
    entries_embed(entry_ids=[entry.pk])
    # "Part 1"/"Part 2" headings differ, so the moved section reads differently: 2 new texts;
    # the first section's chunk is kept.
    assert len(texts_sent(fake_server)) == 2
    chunks = EntryChunk.objects.filter(entry=entry).order_by("ordinal")
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert "new middle words" in chunks[1].text


@pytest.mark.django_db
def test_an_entry_waits_for_its_vectors_and_is_found_by_its_words_meanwhile(
    actor, project, http_provider_settings, fake_server
):
    entry = EntryFactory(project=project, title="Boiler", body="The boiler pressure is 1.5 bar.")
    entry.refresh_from_db()
    assert entry.embed_pending_since is not None  # new text waits for vectors
    entries_embed(entry_ids=[entry.pk])
    entry.refresh_from_db()
    assert entry.embed_pending_since is None

    entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(body="The boiler needs a new thermostat.")
    )
    entry.refresh_from_db()
    assert entry.embed_pending_since is not None
    filters = SearchFilters.parse(project=project.slug)
    for mode in ("hybrid", "text"):
        hits = search_entries(actor, "thermostat", filters=filters, mode=mode)
        assert [h.id for h in hits] == [entry.pk]
    # A change that leaves the text alone (tags) keeps the stamp of the text that waits.
    pending = entry.embed_pending_since
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(tags=["heating"]))
    assert Entry.objects.get(pk=entry.pk).embed_pending_since == pending
    entries_embed(entry_ids=[entry.pk])
    assert Entry.objects.get(pk=entry.pk).embed_pending_since is None
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(tags=["boiler"]))
    assert Entry.objects.get(pk=entry.pk).embed_pending_since is None  # nothing to embed


@pytest.mark.django_db
def test_an_edit_undone_before_the_worker_came_needs_no_model_call(
    actor, project, http_provider_settings, fake_server
):
    entry = EntryFactory(project=project, title="Tap", body="The tap drips.")
    entries_embed(entry_ids=[entry.pk])
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="The tap is fixed."))
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="The tap drips."))
    fake_server.requests.clear()
    assert entries_embed(entry_ids=[entry.pk]) == {entry.pk: "unchanged"}
    assert fake_server.requests == []
    assert Entry.objects.get(pk=entry.pk).embed_pending_since is None
