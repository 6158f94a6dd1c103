"""Full-text ranking must not depend on what the reader cannot see (issue 12): the word
statistics behind the idf are summed only over projects the reader may open."""

import pytest

from knowledge.models import Sensitivity
from knowledge.search import SearchFilters, search_entries
from knowledge.search.engine import rankings
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def ranked(actor, query, **filters):
    """The text-mode hits (title, score), and the raw full-text scores behind them."""
    filters = SearchFilters.parse(**filters)
    hits = [(h.title, h.score) for h in search_entries(actor, query, mode="text", filters=filters)]
    found = rankings(actor, query, mode="text", filters=filters)
    return hits, found.text, found.text_scores


@pytest.fixture
def visible_corpus(project, index):
    entries = [
        EntryFactory(
            project=project, title="Zephyr rollout", body="The zephyr flag ships on Monday."
        ),
        EntryFactory(project=project, title="Rollout notes", body="Canary first, then everyone."),
        EntryFactory(project=project, title="Flag cleanup", body="Remove the old rollout flag."),
        EntryFactory(project=project, title="Lunch", body="Pizza on Friday."),
    ]
    index(*entries)
    return entries


@pytest.fixture
def hidden_project(db):
    """A confidential project alice is no member of."""
    return ProjectFactory(slug="secret", sensitivity=Sensitivity.CONFIDENTIAL)


@pytest.mark.parametrize("filters", [{}, {"project": "acme"}])
def test_hidden_entries_do_not_move_a_readers_scores(
    actor, visible_corpus, hidden_project, index, filters
):
    query = "zephyr rollout flag"
    before = ranked(actor, query, **filters)
    assert before[0] and before[0][0][0] == "Zephyr rollout"

    # Make "zephyr" common and "rollout" rare in a project alice cannot see.
    hidden = [
        EntryFactory(project=hidden_project, title=f"Zephyr memo {i}", body="zephyr zephyr flag")
        for i in range(30)
    ]
    index(*hidden)

    assert ranked(actor, query, **filters) == before


def test_a_member_of_the_hidden_project_does_see_its_statistics(
    actor, visible_corpus, hidden_project, index
):
    """The same change does move the scores of someone who may see both projects: the
    statistics really are counted per project, not frozen."""
    from knowledge.actors import Actor
    from knowledge.models import Membership, Role

    insider = UserFactory(username="insider")
    for p in (visible_corpus[0].project, hidden_project):
        Membership.objects.create(project=p, user=insider, role=Role.VIEWER)
    insider_actor = Actor.for_user(insider)
    query = "zephyr rollout flag"
    before = ranked(insider_actor, query, project="acme")
    alice_before = ranked(actor, query, project="acme")
    index(
        *[
            EntryFactory(project=hidden_project, title=f"Zephyr memo {i}", body="zephyr flag")
            for i in range(30)
        ]
    )
    # The insider's idf covers both projects, even when searching acme alone; alice's does not.
    assert ranked(insider_actor, query, project="acme") != before
    assert ranked(actor, query, project="acme") == alice_before
