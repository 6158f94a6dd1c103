"""Full-text weight of a word by where it stands (title, tags/path, body) and how a word's
share saturates (issue 35: measured on LoCoMo dev, bench/README.md)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledge.search import search_entries
from knowledge.services import EntryFields, entry_upsert
from knowledge.services.embeddings import lexeme_stats_refresh

pytestmark = pytest.mark.django_db


def _titles(actor, query):
    return [hit.title for hit in search_entries(actor, query, mode="text")]


def _write(actor, title, body):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body=body))


def test_the_field_weights_setting_decides_title_against_body(actor, project, settings):
    _write(actor, "Zephyr rollout", "Steps for the release train.")
    _write(actor, "Release train", "The zephyr rollout steps, one by one.")
    lexeme_stats_refresh()
    assert _titles(actor, "zephyr rollout")[0] == "Zephyr rollout"  # the title weighs more
    settings.CAIRN_SEARCH_FIELD_WEIGHTS = [0.1, 0.6, 1.0]  # body above title
    assert _titles(actor, "zephyr rollout")[0] == "Release train"


def test_a_title_word_alone_does_not_outweigh_two_words_in_a_body(actor, project, settings):
    # Each word's share saturates: one word in a title must not beat both of the question's
    # words in another entry's body (the turn that answers, below the one that names a topic).
    _write(actor, "Kestrel", "Field guide page, with a sketch and a map of the coast.")
    _write(actor, "Walk on Sunday", "A kestrel nested by the quarry; we saw it from the ridge.")
    for filler in range(6):  # both words equally rare
        _write(actor, f"Other {filler}", "Unrelated text about lunch menus and parking.")
    lexeme_stats_refresh()
    assert _titles(actor, "kestrel quarry")[0] == "Walk on Sunday"


def test_a_bad_field_weights_setting_says_what_to_give(actor, project, settings):
    _write(actor, "Zephyr rollout", "Steps.")
    lexeme_stats_refresh()
    settings.CAIRN_SEARCH_FIELD_WEIGHTS = [1.0, 2.0]
    with pytest.raises(ImproperlyConfigured, match="three numbers between 0 and 1"):
        search_entries(actor, "zephyr", mode="text")
