"""Note types and schemas on the pages for people: the entry page says whether the entry fits
its type's schema, the project page lists its note types with how many fit."""

from __future__ import annotations

import re

import pytest

from knowledge.services import EntryFields, ProjectFields, entry_update, entry_upsert
from tests.factories import UserFactory
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db

SCHEMA = "```yaml\nrole: string, job title\nlevel?(enum): [junior, senior]\n```\n"


def write(actor, title, body, *, kind="person", project="acme", subtopic=""):
    return entry_upsert(
        actor=actor,
        project=project,
        subtopic=subtopic,
        fields=EntryFields(title=title, body=body, kind=kind),
    ).entry


@pytest.fixture
def alice(client, user, project):
    client.force_login(user)
    return client


@pytest.fixture
def people(actor, project):
    schema = write(actor, "person", SCHEMA, kind="schema")
    return {
        "schema": schema,
        "ada": write(actor, "Ada", "- [role] Engineer\n- [level] senior", subtopic="team"),
        "bob": write(actor, "Bob", "- [level] boss"),
        "note": write(actor, "Launch", "Some text.", kind="note"),
    }


def fit_block(page: str) -> str:
    found = re.search(r'<(p|section) class="schema-fit[^"]*" id="schema-fit">.*?</\1>', page, re.S)
    return found.group(0) if found else ""


def test_an_entry_that_fits_says_so_in_one_quiet_line(alice, people):
    block = fit_block(html(alice.get(f"/e/{people['ada'].short_id}/")))
    assert 'class="schema-fit fits"' in block and "Fits the" in block
    assert f'href="/e/{people["schema"].short_id}/"' in block
    assert f"version {people['schema'].version}" in block and "<li" not in block


def test_an_entry_that_does_not_fit_lists_what_is_missing(alice, people):
    block = fit_block(html(alice.get(f"/e/{people['bob'].short_id}/")))
    assert "Does not fit" in block
    assert 'data-field="role"' in block and "role is missing" in block
    assert 'data-field="level"' in block and "is not one of junior, senior" in block


def test_an_entry_without_a_schema_shows_nothing_about_schemas(alice, people):
    page = html(alice.get(f"/e/{people['note'].short_id}/"))
    assert 'id="schema-fit"' not in page
    schema_page = html(alice.get(f"/e/{people['schema'].short_id}/"))
    assert 'id="schema-fit"' not in schema_page


def test_a_changed_schema_changes_the_entry_page_etag(alice, actor, people):
    url = f"/e/{people['ada'].short_id}/"
    etag = alice.get(url)["ETag"]
    assert alice.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    entry_update(
        actor=actor,
        ref=people["schema"].pk,
        fields=EntryFields(body=SCHEMA.replace("```\n", "team: string\n```\n")),
    )
    answer = alice.get(url, HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200 and "team is missing" in html(answer)


def test_project_page_lists_note_types_with_counts_and_how_many_fit(alice, people):
    page = html(alice.get("/p/acme/"))
    rows = dict(re.findall(r'<tr data-kind="([a-z]+)">(.*?)</tr>', page, re.S))
    assert set(rows) == {"person", "schema", "note"}
    assert '<td class="count">2</td>' in rows["person"] and "1 of 2" in rows["person"]
    assert 'href="/p/acme/?kind=person&amp;fit=no"' in rows["person"]
    assert "no schema" in rows["note"]
    assert 'href="/p/acme/?kind=note"' in rows["note"]


def test_a_note_type_links_to_its_entries_anywhere_in_the_project(alice, people):
    page = html(alice.get("/p/acme/?kind=person"))
    listing = page.split('class="listing"', 1)[1]
    assert "Ada" in listing and "Bob" in listing and "Launch" not in listing
    assert 'class="fit fits"' in listing and "does not fit: role, level" in listing
    assert "team" in listing  # Ada lives in a subtopic: her path is shown


def test_the_misfits_list_shows_only_the_entries_that_do_not_fit(alice, people):
    listing = html(alice.get("/p/acme/?kind=person&fit=no")).split('class="listing"', 1)[1]
    assert "Bob" in listing and "Ada" not in listing
    assert "that do not fit its schema" in listing


def test_a_type_whose_entries_all_fit_says_so(alice, actor, people):
    entry_update(actor=actor, ref=people["bob"].pk, fields=EntryFields(body="- [role] CTO"))
    page = html(alice.get("/p/acme/"))
    row = re.search(r'<tr data-kind="person">(.*?)</tr>', page, re.S).group(1)
    assert "all 2" in row and "fit=no" not in row


def test_an_unknown_kind_lists_nothing_and_is_bounded(alice, people):
    page = html(alice.get("/p/acme/?kind=" + "x" * 5000))
    assert "No such entries here." in page


def test_note_types_count_only_what_the_reader_may_see(client, actor, people, hidden_project):
    outsider = UserFactory(username="mallory")
    client.force_login(outsider)
    assert client.get("/p/vault/").status_code == 404
    page = html(client.get("/p/acme/"))  # acme is internal: readable, same counts
    assert '<tr data-kind="person">' in page


@pytest.fixture
def hidden_project(db):
    from knowledge.actors import Actor
    from knowledge.models import Sensitivity
    from knowledge.services import project_create

    owner = Actor.for_user(UserFactory(username="root", is_superuser=True))
    project_create(
        actor=owner,
        slug="vault",
        fields=ProjectFields(name="Vault", sensitivity=Sensitivity.RESTRICTED),
    )
    write(owner, "person", SCHEMA, kind="schema", project="vault")
    write(owner, "Zed", "no role", project="vault")


def _queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize("url", ["/p/acme/", "/p/acme/?kind=person", "/p/acme/?kind=person&fit=no"])
def test_note_types_cost_a_constant_number_of_queries(alice, actor, people, url):
    few = _queries(alice, url)
    for i in range(8):
        write(actor, f"Person {i}", "- [role] x" if i % 2 else "nothing", subtopic=f"t{i}")
        write(actor, f"Thing {i}", "text", kind=f"kind{i}")
        write(actor, f"kind{i}", "```yaml\nsize: integer\n```", kind="schema")
    # One query per schema check reads the stored observations and relations (not the bodies).
    assert _queries(alice, url) == few <= 11, few


@pytest.mark.parametrize("url", ["/p/acme/", "/p/acme/?kind=person", "/p/acme/?kind=person&fit=no"])
def test_relation_fields_cost_a_constant_number_of_queries(alice, actor, people, url):
    body = SCHEMA.replace("```\n", "works_at?: Organization\n```\n")
    entry_update(actor=actor, ref=people["schema"].pk, fields=EntryFields(body=body))
    write(actor, "Acme Corp", "A customer.", kind="organization")
    few = _queries(alice, url)
    for i in range(8):
        target = "Acme Corp" if i % 2 else "Launch"
        write(actor, f"Person {i}", f"- [role] x\n- works_at [[{target}]]", subtopic=f"t{i}")
    assert _queries(alice, url) == few <= 13, few
    if "fit=no" in url:
        page = html(alice.get(url))
        assert "Person 0" in page and "Person 1" not in page  # Launch is not an organization


def test_the_entry_page_names_a_link_to_an_entry_of_another_kind(alice, actor, people):
    body = SCHEMA.replace("```\n", "works_at?: Organization\n```\n")
    entry_update(actor=actor, ref=people["schema"].pk, fields=EntryFields(body=body))
    bob = write(actor, "Bob", "- [role] PM\n- works_at [[Launch]]")
    block = fit_block(html(alice.get(f"/e/{bob.short_id}/")))
    assert "works_at &#x27;Launch&#x27; links to an entry whose kind is not organization" in block
