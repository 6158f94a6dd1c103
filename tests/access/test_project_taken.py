"""Creating a project whose slug or name is held by a project the caller cannot see answers
exactly as for one they can see: over MCP, REST and the admin, nothing tells "hidden" from
"taken", and all three say it in the same words."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Project, Sensitivity
from knowledge.services.tokens import token_create
from mcp_api import tools
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

# (slug, name) of the project that holds the name: one the caller cannot see, one they can.
HIDDEN, SEEN = ("secret-plan", "Secret Plan"), ("open-plan", "Open Plan")

# How a caller may hit a taken project: its slug, its name, either in another case.
ATTEMPTS = {
    "slug": lambda slug, name: (slug, "Mine"),
    "slug in capitals": lambda slug, name: (slug.upper(), "Mine"),
    "name": lambda slug, name: ("mine", name),
    "name in lower case": lambda slug, name: ("mine", name.lower()),
    "name equal to its slug": lambda slug, name: ("mine", slug),
    "slug equal to its name": lambda slug, name: (name, "Mine"),
}


@pytest.fixture
def mallory(db):
    ProjectFactory(slug=HIDDEN[0], name=HIDDEN[1], sensitivity=Sensitivity.RESTRICTED)
    ProjectFactory(slug=SEEN[0], name=SEEN[1], sensitivity=Sensitivity.PUBLIC)
    user = UserFactory(username="mallory", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    return user


def _mcp(user, slug, name) -> str:
    result = tools.answer(
        "create_project", Actor.for_user(user), {"slug": slug, "name": name, "description": ""}
    )
    assert result.is_error
    return " ".join(c.text for c in result.content)


def _rest(user, slug, name) -> str:
    secret = token_create(actor=Actor.for_user(user), user=user, name="t").secret
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    body = json.dumps({"slug": slug, "name": name})
    response = client.post("/api/v1/projects", body, content_type="application/json")
    assert response.status_code == 409, response.content
    return response.json()["detail"]


def _admin(user, slug, name) -> str:
    client = Client()
    client.force_login(user)
    data = {
        "slug": slug, "name": name, "description": "", "sensitivity": "internal",
        "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0,
    }  # fmt: skip
    page = client.post("/admin/knowledge/project/add/", data, follow=True).content.decode()
    # Field errors (errorlist) and, in the admin's theme, messages in the main column's list.
    said = re.findall(
        r'<ul class="(?:errorlist|messagelist|flex flex-col gap-3 mb-4)[^"]*"[^>]*>(.*?)</ul>',
        page,
        re.S,
    )
    assert said, "the admin said nothing"
    return " ".join(said)


def _blank(text: str, slug: str, name: str) -> str:
    """The answer with what was asked for left out (echoing the caller's input is fine)."""
    for asked in sorted({slug, slug.upper(), name, name.lower()}, key=len, reverse=True):
        text = text.replace(asked, "ASKED")
    return text


@pytest.mark.parametrize("surface", [_mcp, _rest, _admin], ids=["mcp", "rest", "admin"])
@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_hidden_and_visible_projects_answer_alike(mallory, surface, attempt):
    hidden_ask, seen_ask = ATTEMPTS[attempt](*HIDDEN), ATTEMPTS[attempt](*SEEN)
    hidden = _blank(surface(mallory, *hidden_ask), *HIDDEN)
    seen = _blank(surface(mallory, *seen_ask), *SEEN)
    assert hidden == seen
    if not (surface is _admin and attempt == "slug equal to its name"):  # the form wants a slug
        assert "not available" in hidden, hidden  # one answer, in the same words everywhere
    assert Project.objects.count() == 2
