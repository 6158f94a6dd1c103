"""`field__any=[…]` selects what `field__in=[…]` selects, with one array parameter whatever
the list's length, and an empty list selects nothing."""

from __future__ import annotations

import pytest

from knowledge.models import Project
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def test_any_selects_what_in_selects_with_one_parameter():
    made = [ProjectFactory(slug=f"p{i}") for i in range(4)]
    for ids in ([made[0].pk], [made[1].pk, made[3].pk], [p.pk for p in made], [], [-5]):
        assert set(Project.objects.filter(pk__any=ids)) == set(Project.objects.filter(pk__in=ids))
    for texts in (["p1"], ["p2", "nope"], []):
        found = Project.objects.filter(slug__any=texts)
        assert set(found) == set(Project.objects.filter(slug__in=texts))
        sql, params = found.query.sql_with_params()
        assert "= ANY(" in sql and list(params) == [texts]


def test_any_reaches_through_a_relation():
    made = ProjectFactory(slug="through")
    subtopic = made.subtopics.create(slug="a", name="A", path="a")
    assert list(made.subtopics.filter(project__slug__any=["through"])) == [subtopic]
