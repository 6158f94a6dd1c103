"""Search's hand-written statements keep the ORM's answers: the searched project resolves as
project_get does, the visible projects compiled once per kind of actor never outlive a change
of membership nor serve another actor, and hits read without building models carry the same
addresses and passages."""

import uuid

import pytest

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError
from knowledge.models import Membership, Project, Role, Sensitivity
from knowledge.search import SearchFilters, search_entries
from knowledge.selectors import project_get, project_id_get
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def outcome(resolve, actor, ref):
    """A resolution's answer: the project id, or the error a caller would read."""
    try:
        found = resolve(actor, ref)
    except KnowledgeError as exc:
        return type(exc).__name__, exc.message
    return getattr(found, "pk", found)


@pytest.fixture
def projects(project):
    """acme (alice is editor), a restricted and a confidential project she is no member of, and
    two that only data from before the naming rules holds: a public one whose slug is acme's id
    in digits, and one named like the restricted one's slug."""
    restricted = ProjectFactory(slug="vault", name="Strongroom", sensitivity=Sensitivity.RESTRICTED)
    confidential = ProjectFactory(slug="payroll", sensitivity=Sensitivity.CONFIDENTIAL)
    digits = ProjectFactory(slug="digits", sensitivity=Sensitivity.PUBLIC)
    named = ProjectFactory(slug="ops-team", sensitivity=Sensitivity.PUBLIC)
    Project.objects.filter(pk=digits.pk).update(slug=str(project.pk))
    Project.objects.filter(pk=named.pk).update(name="Vault")
    return project, restricted, confidential, digits, named


def test_the_searched_project_resolves_as_project_get_does(actor, projects):
    acme, restricted, _confidential, _digits, named = projects
    refs = [
        "acme",
        " ACME ",
        "Acme",
        acme.pk,  # also the slug of `digits`: ambiguous, refused
        str(named.pk),
        "vault",  # restricted slug, but also `named`'s name: the visible one
        "payroll",  # confidential: Forbidden
        str(restricted.pk),
        "nothing-like-it",
        "",
        "x" * 500,
        str(2**70),
    ]
    answers = [(ref, outcome(project_id_get, actor, ref)) for ref in refs]
    assert answers == [(ref, outcome(project_get, actor, ref)) for ref in refs]
    assert dict(answers)["vault"] == named.pk
    assert dict(answers)["payroll"][0] == "Forbidden"


def test_a_lost_membership_counts_at_the_next_search(actor, user, index):
    secret = ProjectFactory(slug="secret", sensitivity=Sensitivity.CONFIDENTIAL)
    membership = Membership.objects.create(project=secret, user=user, role=Role.VIEWER)
    index(EntryFactory(project=secret, title="Zephyr plan", body="The zephyr plan ships."))
    filters = SearchFilters.parse(project="secret")
    assert [h.title for h in search_entries(actor, "zephyr plan", filters=filters)] == [
        "Zephyr plan"
    ]
    assert [h.title for h in search_entries(actor, "zephyr plan")] == ["Zephyr plan"]

    membership.delete()
    with pytest.raises(KnowledgeError) as refused:
        search_entries(actor, "zephyr plan", filters=filters)
    assert type(refused.value).__name__ == "Forbidden"
    assert list(search_entries(actor, "zephyr plan")) == []


def test_one_actors_compiled_scope_never_serves_another(actor, index, settings):
    # A guest group of this test's own: no compilation from an earlier test has its key.
    settings.CAIRN_GUEST_GROUPS = [f"guests-{uuid.uuid4().hex}"]
    secret = ProjectFactory(slug="secret", sensitivity=Sensitivity.CONFIDENTIAL)
    index(EntryFactory(project=secret, title="Zephyr plan", body="The zephyr plan ships."))
    insider = UserFactory(username="insider")
    Membership.objects.create(project=secret, user=insider, role=Role.VIEWER)
    boss = Actor.for_user(UserFactory(username="boss", is_superuser=True))
    narrowed = Actor(user=insider, project_ids=frozenset({-1}))
    in_secret = SearchFilters.parse(project="secret")
    for reader in (Actor.for_user(insider), boss):  # their compilations are cached first
        assert [h.title for h in search_entries(reader, "zephyr plan")] == ["Zephyr plan"]
        found = search_entries(reader, "zephyr plan", filters=in_secret)
        assert [h.title for h in found] == ["Zephyr plan"]

    for outsider in (actor, narrowed):
        assert list(search_entries(outsider, "zephyr plan")) == []
        with pytest.raises(KnowledgeError):
            search_entries(outsider, "zephyr", filters=in_secret)


def test_hits_carry_the_entrys_own_address_and_matched_passage(actor, project, index):
    plain = EntryFactory(project=project, title="Kestrels", body="Kestrels nest on the tower.")
    nested = EntryFactory(
        project=project,
        subtopic="birds/raptors",
        title="Falcons",
        body="Peregrine falcons nest on the cathedral.",
        tags=["birds"],
    )
    index(plain, nested)
    hits = {h.id: h for h in search_entries(actor, "nest", mode="text")}
    for entry in (plain, nested):
        entry.refresh_from_db()
        hit = hits[entry.pk]
        assert (hit.path, hit.address, hit.short_id) == (
            entry.path,
            entry.permalink,
            entry.short_id,
        )
        assert (hit.tags, hit.kind, hit.status, hit.updated) == (
            entry.tags,
            entry.kind,
            entry.status,
            entry.updated_at,
        )
    meaning = search_entries(actor, "peregrine cathedral", mode="semantic")
    assert meaning[0].title == "Falcons"
    assert "cathedral" in meaning[0].snippet
