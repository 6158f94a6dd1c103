"""compile_once: the ORM's statement for a shape, compiled once, each call binding its values;
rows read as the queryset reads them; stand-ins that do not come out whole refuse to compile."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.test.utils import CaptureQueriesContext

from knowledge.db import Stand, StandInLost, compile_once
from knowledge.db import compiled as compiled_module
from knowledge.models import Entry, Project
from knowledge.services import EntryFields, entry_update, entry_upsert
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh():
    compiled_module.clear()
    yield
    compiled_module.clear()


def _write(actor, title, subtopic=None, body="x"):
    fields = EntryFields(title=title, body=body, metadata={"about": title})
    return entry_upsert(actor=actor, project="acme", subtopic=subtopic, fields=fields).entry


def test_one_shape_is_compiled_once_and_binds_each_calls_values(project):
    made = [ProjectFactory(slug=f"p{i}") for i in range(50)]
    built = []

    def build(s: Stand):
        built.append(1)
        return Project.objects.filter(pk__any=s.ints("ids")).order_by("pk").values_list("slug")

    one = compile_once("projects", build)
    assert one.rows(ids=[made[3].pk]) == [("p3",)]
    many = compile_once("projects", build)
    assert many is one and len(built) == 1
    assert many.rows(ids=[p.pk for p in made]) == [(p.slug,) for p in made]
    assert many.rows(ids=[]) == []
    with pytest.raises(KeyError):
        many.rows()


def test_the_sql_is_the_orms_own(actor, project):
    entry = _write(actor, "Same")

    def build(s):
        return Entry.objects.filter(project_id=s.int("p"), title=s.text("t")).values_list("pk")

    compiled = compile_once("same", build)
    orm = Entry.objects.filter(project_id=project.pk, title="Same").values_list("pk")
    with CaptureQueriesContext(connection) as captured:
        assert compiled.rows(p=project.pk, t="Same") == [(entry.pk,)] == list(orm)
    assert len(captured) == 2 and captured[0]["sql"] == captured[1]["sql"]


def test_a_stand_in_for_an_unsigned_column_survives(actor, project):
    """PositiveIntegerField: a value out of its range compiles to nothing (Django drops the
    lookup), so a stand-in must be in range."""
    entry = _write(actor, "Versions")
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two"))

    def build(s):
        return Entry.objects.filter(pk=s.int("id"), version__gt=s.int("v")).values_list("version")

    compiled = compile_once("versions", build)
    assert compiled.rows(id=entry.pk, v=1) == [(2,)]
    assert compiled.rows(id=entry.pk, v=2) == []


def test_a_stand_in_folded_into_a_pattern_refuses_to_compile(project):
    with pytest.raises(StandInLost, match="folded"):
        compile_once("like", lambda s: Project.objects.filter(slug__icontains=s.text("part")))


def test_a_list_expanded_by_in_refuses_to_compile(project):
    with pytest.raises(StandInLost):
        compile_once("in", lambda s: Project.objects.filter(pk__in=s.ints("ids")))


def test_a_stand_in_compiled_away_refuses_to_compile(project):
    def build(s):
        s.int("unused")
        return Project.objects.filter(slug=s.text("slug"))

    with pytest.raises(StandInLost, match="compiled away: unused"):
        compile_once("unused", build)


def test_a_queryset_that_matches_nothing_sends_nothing(project):
    compiled = compile_once("none", lambda s: Project.objects.none())
    with CaptureQueriesContext(connection) as captured:
        assert compiled.rows() == [] and compiled.first() is None
    assert compiled.sql is None and len(captured) == 0


def test_a_literal_percent_survives(project):
    ProjectFactory(slug="fifty", name="50% done")

    def build(s):
        return Project.objects.filter(Q(name="50% done") | Q(slug=s.text("slug"))).values_list(
            "slug"
        )

    assert compile_once("percent", build).rows(slug="nope") == [("fifty",)]


def test_a_model_queryset_loads_the_instances_the_orm_loads(actor, project):
    entry = _write(actor, "Deep", "infra/prod")
    _write(actor, "Root")

    def build(s):
        writable = Project.objects.filter(pk__any=s.ints("writable"))
        return (
            Entry.objects.select_related("project", "subtopic")
            .defer("search_vector")
            .filter(project_id=s.int("project"), title__iexact=s.text("title"))
            .annotate(may=ExpressionWrapper(Q(project__in=writable), BooleanField()))
        )

    compiled = compile_once("deep", build)
    found = compiled.first(project=project.pk, title="DEEP", writable=[project.pk])
    expected = Entry.objects.select_related("project", "subtopic").get(pk=entry.pk)
    for field in Entry._meta.concrete_fields:
        if field.attname != "search_vector":
            assert getattr(found.obj, field.attname) == getattr(expected, field.attname), field
    with CaptureQueriesContext(connection) as captured:
        assert (found.obj.project.slug, found.obj.subtopic.path) == ("acme", "infra/prod")
    assert len(captured) == 0, "project and subtopic were loaded with the entry"
    assert found.obj.get_deferred_fields() == {"search_vector"}
    # An annotation is handed apart, never set on the instance.
    assert found.extra == {"may": True} and not hasattr(found.obj, "may")
    assert compiled.first(project=project.pk, title="deep", writable=[]).extra == {"may": False}
    root = compiled.first(project=project.pk, title="root", writable=[])
    assert root.obj.subtopic is None


def test_a_row_lock_keeps_its_of_clause(actor, project):
    entry = _write(actor, "Locked", "a")

    def build(s):
        return (
            Entry.objects.select_related("project", "subtopic")
            .select_for_update(of=("self",))
            .filter(pk=s.int("id"))
        )

    with transaction.atomic():
        compiled = compile_once("lock", build)
        with CaptureQueriesContext(connection) as captured:
            assert compiled.first(id=entry.pk).obj.pk == entry.pk
    assert captured[0]["sql"].endswith('FOR UPDATE OF "knowledge_entry"')


def test_the_compiled_shapes_are_bounded_in_bytes(project, monkeypatch):
    from ops.lru import BoundedCache

    monkeypatch.setattr(compiled_module, "_compiled", BoundedCache(60_000))
    for i in range(40):
        compile_once(("shape", i), lambda s, i=i: Project.objects.filter(slug=f"p{i}"))
    kept = compiled_module._compiled
    assert 0 < len(kept) < 40 and kept.bytes <= 60_000
