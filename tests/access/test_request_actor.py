"""`request.actor` (memory_site/actors.py, api/auth.py): every Django surface acts as the actor
the request carries, and a REST call's actor is the one its credential names.

Two test middlewares stand beside ActorMiddleware: `ActAs` swaps `request.actor` for another
person's (so a surface that rebuilt the actor from `request.user` would show the wrong rows),
and `Recorder` keeps what `request.actor` and ninja's `request.auth` were once the view ran.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from knowledge.actors import Actor
from knowledge.models import Membership, Role, Sensitivity
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
from knowledge.services.tokens import token_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TITLE = "Quokka budget"
SEEN: list[tuple[Actor, object]] = []


class ActAs:
    """`X-Act-As: <username>` makes that person `request.actor`, whoever is signed in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if name := request.headers.get("X-Act-As"):
            request.actor = Actor.for_user(get_user_model().objects.get(username=name))
        return self.get_response(request)


class Recorder:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        SEEN.append((request.actor, getattr(request, "auth", None)))
        return response


@pytest.fixture
def recorded(settings):
    stack = list(settings.MIDDLEWARE)
    at = stack.index("memory_site.actors.ActorMiddleware") + 1
    stack[at:at] = [f"{__name__}.ActAs", f"{__name__}.Recorder"]
    settings.MIDDLEWARE = stack
    SEEN.clear()
    return SEEN


@pytest.fixture
def vault(db):
    """A restricted project: its member `insider` sees the entry, staff `outsider` does not."""
    insider = UserFactory(username="insider")
    outsider = UserFactory(username="outsider", is_staff=True)
    outsider.user_permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    root = Actor.for_user(UserFactory(username="root", is_superuser=True))
    project = project_create(
        actor=root, slug="vault", fields=ProjectFields(sensitivity=Sensitivity.RESTRICTED)
    )
    Membership.objects.create(project=project, user=insider, role=Role.EDITOR)
    entry = entry_upsert(actor=root, project="vault", fields=EntryFields(title=TITLE, body="b"))
    return {"insider": insider, "outsider": outsider, "entry": entry.entry}


def _urls(entry) -> dict[str, str]:
    return {
        "page: entry": f"/e/{entry.pk}/",
        "page: project": "/p/vault/",
        "page: search": "/search/?q=quokka",
        "admin: entries (knowledge/admin)": "/admin/knowledge/entry/",
        "admin: revisions (history/admin)": f"/admin/knowledge/entry/{entry.pk}/history/",
    }


def test_pages_and_the_admin_act_as_request_actor(client, vault, recorded):
    client.force_login(vault["outsider"])
    for what, url in _urls(vault["entry"]).items():
        as_themselves = client.get(url)
        assert TITLE not in as_themselves.content.decode(), f"{what}: the outsider sees it"
        as_insider = client.get(url, headers={"X-Act-As": "insider"})
        assert as_insider.status_code == 200, what
        assert TITLE in as_insider.content.decode(), f"{what} did not act as request.actor"
    assert recorded[-1][0].user == vault["insider"]


def test_a_rest_session_call_acts_as_its_session(client, vault, recorded):
    client.force_login(vault["insider"])
    response = client.get(f"/api/v1/entries/{vault['entry'].pk}")
    assert response.status_code == 200
    assert response.json()["title"] == TITLE
    actor, auth = recorded[-1]
    assert actor is auth
    assert actor.user == vault["insider"] and actor.token_id is None


def test_a_rest_token_call_acts_as_the_token_not_the_session(client, vault, recorded):
    created = token_create(
        actor=Actor.system(), user=vault["insider"], name="t", agent_label="agent:quokka"
    )
    client.force_login(vault["outsider"])  # a browser session rides along with the token
    response = client.get(
        f"/api/v1/entries/{vault['entry'].pk}",
        headers={"Authorization": f"Bearer {created.secret}"},
    )
    assert response.status_code == 200
    actor, auth = recorded[-1]
    assert actor is auth
    assert (actor.user, actor.agent, actor.token_id) == (
        vault["insider"],
        "agent:quokka",
        created.token.pk,
    )


def test_a_signed_in_healthz_still_touches_nothing(client, vault, django_assert_num_queries):
    # request.user stays lazy: building request.actor must not load the session or the user.
    client.force_login(vault["insider"])
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
