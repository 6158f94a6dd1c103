"""Each statement of knowledge/db the ORM cannot say, held to what its ORM form does: the same
rows, the same vectors, the same answers."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.forms.models import model_to_dict

from knowledge.db.graph import write_facts
from knowledge.db.revisions import token_latest
from knowledge.models import HistoricalEntry, Observation, Relation
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db

WHEN = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def _rows(model, **where) -> list[dict]:
    leave = {"id", "search_vector"}
    return [
        {k: v for k, v in model_to_dict(row).items() if k not in leave}
        for row in model.objects.filter(**where).order_by("position", "pk")
    ]


def test_write_facts_closes_and_adds_as_the_orm_does(actor, project):
    one = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="One", body="")).entry
    two = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Two", body="")).entry
    observations = [
        {"category": "fact", "content": "It ran", "tags": ["ops"], "context": "ctx", "position": 0},
        {"category": "idea", "content": "Cache", "tags": [], "context": "", "position": 2},
    ]
    relations = [
        {"type": "relates_to", "text": "Two", "key": "two", "target": two.pk, "position": 1},
        {"type": "needs", "text": "Nowhere", "key": "nowhere", "target": None, "position": 3},
    ]
    # By hand, in one statement, for entry one; by the ORM for entry two.
    write_facts(entry_id=one.pk, when=WHEN, version=3, close_observations=[],
                close_relations=[], observations=observations, relations=relations,
                config=settings.CAIRN_SEARCH_CONFIG)  # fmt: skip
    Observation.objects.bulk_create(
        Observation(entry=two, valid_from=WHEN, valid_from_version=3, **o) for o in observations
    )
    Relation.objects.bulk_create(
        Relation(source=two, relation_type=r["type"], target_text=r["text"], target_key=r["key"],
                 target_id=r["target"], position=r["position"], valid_from=WHEN,
                 valid_from_version=3)
        for r in relations
    )  # fmt: skip
    for model, key in ((Observation, "entry"), (Relation, "source")):
        mine, theirs = _rows(model, **{key: one}), _rows(model, **{key: two})
        assert [{**r, key: None} for r in mine] == [{**r, key: None} for r in theirs], model
    # The vector each observation gets is the one SearchVector makes (content A, category B,
    # context C).
    config = settings.CAIRN_SEARCH_CONFIG
    for row in Observation.objects.filter(entry=one).annotate(
        expected=SearchVector("content", weight="A", config=config)
        + SearchVector("category", weight="B", config=config)
        + SearchVector("context", weight="C", config=config)
    ):
        assert row.search_vector == row.expected and row.search_vector
    # Closing: the same as an update of valid_to and valid_to_version.
    later = WHEN + dt.timedelta(hours=1)
    write_facts(entry_id=one.pk, when=later, version=4,
                close_observations=list(one.observations.values_list("pk", flat=True)[:1]),
                close_relations=list(one.relations_out.values_list("pk", flat=True)[:1]),
                observations=[], relations=[], config=config)  # fmt: skip
    Observation.objects.filter(pk__in=two.observations.values("pk")[:1]).update(
        valid_to=later, valid_to_version=4
    )
    Relation.objects.filter(pk__in=two.relations_out.values("pk")[:1]).update(
        valid_to=later, valid_to_version=4
    )
    for model, key in ((Observation, "entry"), (Relation, "source")):
        mine, theirs = _rows(model, **{key: one}), _rows(model, **{key: two})
        assert [{**r, key: None} for r in mine] == [{**r, key: None} for r in theirs], model
        assert sum(r["valid_to"] is not None for r in mine) == 1


@pytest.mark.parametrize("writes", [0, 1, 3])
def test_token_latest_is_the_tokens_newest_revision_as_the_orm_reads_it(actor, project, writes):
    agent = dataclasses.replace(actor, token_id=4242)
    other = dataclasses.replace(actor, token_id=4243)
    for n in range(writes):
        entry_upsert(actor=agent, project="acme", fields=EntryFields(title=f"T{n}", body="x"))
        entry_upsert(actor=other, project="acme", fields=EntryFields(title=f"O{n}", body="y"))
    orm = (
        HistoricalEntry.objects.filter(history_token_id=4242)
        .order_by("-history_id")
        .values_list("history_run", "history_date")
        .first()
    )
    assert token_latest(4242) == orm
    assert (orm is None) == (writes == 0)
