"""Leak-matrix columns for note-type schemas: validate, infer (with and without a project) and
diff, as selectors, over REST and over MCP; the schema lookup itself, and the admin's entry
form and live preview, which name a project by the id they were sent.

Each case makes the target entry a `zebratype` (rows written directly; the case's savepoint
rolls them back) with a `[budget]` observation, gives the target project a `zebratype`
schema, and links the public `commons` entry (a `memo`) to the target. A reader who may not see
the target must learn nothing of it from a schema report: not its id, not its observations,
not even its kind through the commons entry's relation.
"""

from __future__ import annotations

import json

from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError
from knowledge.models import Entry, Observation, Relation
from knowledge.note_types import lookup as note_type_lookup
from knowledge.note_types import reads as note_types
from tests.access.surfaces import assert_silent, surface
from tests.access.surfaces_api import API, _mcp, _read
from tests.access.world import PERSON_ROLES, SECRET_WORD, SLUG, World

TYPE = "zebratype"
SCHEMA = "```yaml\nbudget: integer\nowner: string\n```"


def _setup(world: World) -> None:
    root = Actor.system()
    body = f"The {SECRET_WORD} budget.\n\n- [budget] 43\n- [codename] {SECRET_WORD}"
    Entry.objects.filter(pk=world.entry.pk).update(kind=TYPE, body=body)
    # The rows the write path stores for that body: the schema reports read these, not bodies.
    Observation.objects.bulk_create(
        Observation(
            entry=world.entry,
            category=category,
            content=content,
            position=position,
            valid_from=timezone.now(),
            valid_from_version=1,
        )
        for position, (category, content) in enumerate(
            (("budget", "43"), ("codename", SECRET_WORD))
        )
    )
    Entry.objects.create(
        project=world.target, title=TYPE, kind="schema", body=SCHEMA, slug=TYPE,
        content_hash="x", created_by=root.db_user,
    )  # fmt: skip
    Entry.objects.filter(pk=world.commons_entry.pk).update(kind="memo", body="- cites [[x]]")
    Relation.objects.create(
        source=world.commons_entry, relation_type="cites", target_text="the plan",
        target_key="the-plan", target=world.entry, valid_from=timezone.now(),
        valid_from_version=1,
    )  # fmt: skip


def _silent(world: World, text: str, saw: bool) -> bool:
    if not saw:
        lowered = text.lower()
        assert SECRET_WORD not in lowered, f"a schema report leaks the entry: {text[:300]}"
        assert world.entry.short_id not in text, "a schema report names the hidden entry"
        assert TYPE not in lowered.replace(f"'{TYPE}'", ""), "a report shows the hidden kind"
    return saw


@surface("schema_validate_selector", "read")
def _schema_validate_selector(world: World) -> bool:
    _setup(world)
    try:
        [run] = note_types.schema_validate(world.actor(), project=SLUG, note_type=TYPE)
    except KnowledgeError as exc:
        assert_silent(world, exc, SLUG)
        return False
    assert [fit.entry.pk for fit in run.results] == [world.entry.pk]
    assert [c.field.name for c in run.results[0].report.misfits] == ["owner"]
    return True


@surface("schema_infer_via_commons", "read")
def _schema_infer_via_commons(world: World) -> bool:
    """The commons `memo` links to the target: its kind shows as the relation's type only to
    readers of the target."""
    _setup(world)
    run = note_types.schema_infer(world.actor(), project="commons", note_type="memo")
    text = json.dumps([u.as_dict() for u in run.inference.usages])
    saw = "Zebratype" in text
    assert saw or "Entry" in text
    return _silent(world, text, saw)


@surface("rest_schema_validate", "read")
def _rest_schema_validate(world: World) -> bool:
    _setup(world)
    response = world.rest_client.get(f"{API}/projects/{SLUG}/schemas/validate", {"note_type": TYPE})
    ok = _read(world, response, SLUG)
    assert not ok or world.entry.short_id in response.content.decode()
    return ok


@surface("mcp_schema_infer_without_project", "read")
def _mcp_schema_infer_without_project(world: World) -> bool:
    """Without a project, the tool picks the one project holding the type, or lists those the
    reader may see: a hidden project is never named."""
    _setup(world)
    ok, text = _mcp("schema_infer", world, note_type=TYPE, threshold=0.25, project=None)
    assert not ok or "budget" in text
    return _silent(world, text, ok)


@surface("mcp_schema_validate", "read")
def _mcp_schema_validate(world: World) -> bool:
    _setup(world)
    ok, text = _mcp(
        "schema_validate", world, note_type=TYPE, identifier=None, project=SLUG, asked=SLUG
    )
    return _silent(world, text, ok)


@surface("mcp_schema_diff", "read")
def _mcp_schema_diff(world: World) -> bool:
    _setup(world)
    ok, text = _mcp("schema_diff", world, note_type=TYPE, project=SLUG, asked=SLUG)
    assert not ok or "codename" in text
    return _silent(world, text, ok)


# --- the schema lookup, and the admin pages that name a project by the id they were sent -------


@surface("schema_lookup_selector", "read")
def _schema_lookup_selector(world: World) -> bool:
    _setup(world)
    schema = note_type_lookup.project_schema(world.actor(), world.target, TYPE)
    assert schema is None or [f.name for f in schema.fields] == ["budget", "owner"]
    return schema is not None


@surface("admin_entry_form_schema", "read", PERSON_ROLES)
def _admin_entry_form_schema(world: World) -> bool:
    """The entry form posted with the target's id and no title: shown again, with the inputs of
    the target's schema only for its readers."""
    _setup(world)
    data = {"project": world.target.pk, "title": "", "body": "x", "kind": TYPE,
            "status": "active", "metadata": "{}"}  # fmt: skip
    response = world.admin_client.post("/admin/knowledge/entry/add/", data)
    assert response.status_code == 200
    html = response.content.decode()
    saw = "metadata__f_owner" in html
    # The form shows the kind it was sent: only the schema's fields would be news.
    assert saw or ("metadata__f_budget" not in html and SECRET_WORD not in html.lower())
    return saw


@surface("admin_entry_live_preview_schema", "read", PERSON_ROLES)
def _admin_entry_live_preview_schema(world: World) -> bool:
    _setup(world)
    data = {"text": "- [budget] 43", "project": str(world.target.pk), "kind": TYPE, "title": "x"}
    response = world.admin_client.post("/admin/knowledge/entry/preview/live/", data)
    html = response.content.decode()
    return _silent(world, html, 'data-field="owner"' in html)
