"""The admin a staff member works in: Cairn's search in the entry list, the subtopic tree as a
filter, bulk changes with a reason, the editor's live preview, a conflicting save that keeps the
person's text, and page costs that do not grow with the page."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from history.snapshots import backlog_snapshot_take
from knowledge.actors import Actor
from knowledge.models import Entry, Membership, Role
from knowledge.services import (
    EntryFields,
    entries_embed,
    entry_update,
    entry_upsert,
    lexeme_stats_refresh,
)
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db
CHANGELIST = "/admin/knowledge/entry/"


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def notes(project):
    entries = {
        e.title: e
        for e in (
            EntryFactory(project=project, subtopic="ops", title="Deployment checklist",
                         body="Run migrations, then restart the workers and watch the error rate.",
                         tags=["deploy"]),
            EntryFactory(project=project, subtopic="ops/storage", title="Database backups",
                         body="Nightly pg_dump to object storage; restore tested every month."),
            EntryFactory(project=project, subtopic="people", title="Holiday plans",
                         body="Caroline is travelling to Sweden in July to see the midnight sun."),
            EntryFactory(project=project, title="Team charter", body="How we work together."),
        )
    }  # fmt: skip
    entries_embed(entry_ids=[e.pk for e in entries.values()])
    lexeme_stats_refresh()
    return entries


def _sam() -> Actor:
    """Someone else who edits acme meanwhile (its maintainer, from the factories)."""
    return Actor.for_user(UserFactory(username="factory"))


def _rows(response) -> list[str]:
    """The titles of the changelist's rows, in order."""
    html = response.content.decode()
    return re.findall(r'<th class="field-title[^"]*"[^>]*><a href="[^"]+"[^>]*>([^<]+)</a>', html)


# --- search --------------------------------------------------------------------------------------


def test_a_paraphrase_finds_the_entry_with_a_snippet_column(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "vacation trip abroad in summer"})
    assert response.status_code == 200
    assert _rows(response)[0] == "Holiday plans"
    assert b"column-snippet" in response.content
    assert b"midnight sun" in response.content  # the snippet shows a semantic hit's text


def test_words_are_ranked_and_highlighted(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "restart workers"})
    assert _rows(response)[0] == "Deployment checklist"
    assert b"<mark>restart</mark>" in response.content


def test_an_exact_short_id_finds_that_entry_only(admin_client, notes):
    entry = notes["Database backups"]
    response = admin_client.get(CHANGELIST, {"q": entry.short_id})
    assert _rows(response) == ["Database backups"]
    assert b"column-snippet" not in response.content  # the stock lookup, no ranking


def test_the_sidebar_filters_narrow_the_search(admin_client, notes, project):
    other = ProjectFactory(slug="other")
    EntryFactory(project=other, title="Restart notes", body="restart the workers nightly")
    both = admin_client.get(CHANGELIST, {"q": "restart workers"})
    assert set(_rows(both)) >= {"Deployment checklist", "Restart notes"}
    one = admin_client.get(CHANGELIST, {"q": "restart workers", "project__id__exact": project.pk})
    assert "Restart notes" not in _rows(one)
    tree = admin_client.get(CHANGELIST, {"q": "restart workers", "tree": "other"})
    assert _rows(tree) == ["Restart notes"]


def test_search_shows_only_what_the_person_may_see(client, notes, project):
    hidden = ProjectFactory(slug="secret", sensitivity="restricted")
    EntryFactory(project=hidden, title="Secret restart", body="restart the workers")
    person = UserFactory(username="eve", is_staff=True)
    from django.contrib.auth.models import Permission

    person.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    Membership.objects.create(project=project, user=person, role=Role.EDITOR)
    client.force_login(person)
    rows = _rows(client.get(CHANGELIST, {"q": "restart workers"}))
    assert "Deployment checklist" in rows
    assert "Secret restart" not in rows


def test_a_query_search_refuses_is_said_on_the_page(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "word " * 200}, follow=True)
    assert response.status_code == 200
    assert b"the limit is" in response.content
    assert _rows(response) == []


# --- the tree ------------------------------------------------------------------------------------


def test_the_tree_counts_descendants_and_filters_the_list(admin_client, notes):
    page = admin_client.get(CHANGELIST)
    html = page.content.decode()
    ops = re.search(r'data-key="acme/ops">.*?cairn-count[^>]*>(\d+)<', html, re.S)
    assert ops and ops.group(1) == "2"  # ops itself and ops/storage
    acme = re.search(r'data-key="acme">.*?cairn-count[^>]*>(\d+)<', html, re.S)
    assert acme and acme.group(1) == "4"
    filtered = admin_client.get(CHANGELIST, {"tree": "acme/ops"})
    assert sorted(_rows(filtered)) == ["Database backups", "Deployment checklist"]
    deeper = admin_client.get(CHANGELIST, {"tree": "acme/ops/storage"})
    assert _rows(deeper) == ["Database backups"]


def test_the_project_page_shows_its_tree(admin_client, notes, project):
    page = admin_client.get(reverse("admin:knowledge_project_change", args=[project.pk]))
    html = page.content.decode()
    assert 'data-key="acme/ops/storage"' in html
    assert "?tree=acme%2Fops" in html  # each node opens the entry list filtered to it
    assert "/admin/knowledge/subtopic/add/?project=" in html  # a subtopic is added from the tree


# --- bulk actions --------------------------------------------------------------------------------


def _bulk(client, action: str, entries, **fields):
    data = {"action": action, "_selected_action": [e.pk for e in entries], "apply": "1"}
    data |= {f"version_{e.pk}": e.version for e in entries}
    return client.post(CHANGELIST, data | fields, follow=True)


def test_a_bulk_action_asks_for_a_reason_first(admin_client, notes):
    two = [notes["Holiday plans"], notes["Team charter"]]
    page = admin_client.post(
        CHANGELIST, {"action": "move_entries", "_selected_action": [e.pk for e in two]}
    )
    assert page.status_code == 200
    assert b"Move entries to a subtopic" in page.content
    assert f'name="version_{two[0].pk}" value="1"'.encode() in page.content
    nothing = admin_client.post(
        CHANGELIST,
        {"action": "move_entries", "_selected_action": [e.pk for e in two], "apply": "1",
         "subtopic": "archive"},
    )  # fmt: skip
    assert b"This field is required" in nothing.content  # no reason, no change
    assert Entry.objects.get(pk=two[0].pk).version == 1


def test_bulk_move_makes_one_revision_each_with_the_reason(admin_client, notes):
    two = [notes["Holiday plans"], notes["Team charter"]]
    response = _bulk(admin_client, "move_entries", two, subtopic="Archive > 2026",
                     reason="tidy up the tree")  # fmt: skip
    assert b"Moved 2 entries, one revision each (reason: tidy up the tree)" in response.content
    for entry in two:
        entry = Entry.objects.get(pk=entry.pk)
        assert entry.subtopic.path == "archive/2026"
        assert entry.version == 2
        assert entry.history.count() == 2
        assert entry.history.first().history_change_reason == "tidy up the tree"


def test_bulk_move_refuses_a_conflict_and_does_the_rest(admin_client, notes, actor):
    first, second = notes["Holiday plans"], notes["Team charter"]
    entry_update(actor=_sam(), ref=first.pk, fields=EntryFields(body="changed meanwhile"))
    response = _bulk(admin_client, "move_entries", [first, second], subtopic="archive",
                     reason="tidy")  # fmt: skip
    html = response.content.decode()
    assert "Moved 1 entry" in html
    assert f"Not changed: Holiday plans ({first.short_id})" in html
    assert Entry.objects.get(pk=first.pk).subtopic.path == "people"
    assert Entry.objects.get(pk=second.pk).subtopic.path == "archive"


def test_bulk_tags_add_and_remove(admin_client, notes):
    entry = notes["Deployment checklist"]
    response = _bulk(admin_client, "tag_entries", [entry], add="Ops, runbook", remove="deploy",
                     reason="retag")  # fmt: skip
    assert b"Retagged 1 entry" in response.content
    entry.refresh_from_db()
    assert entry.tags == ["ops", "runbook"]
    assert entry.history.first().history_change_reason == "retag"


def test_bulk_status_and_verify(admin_client, notes, staff):
    two = [notes["Holiday plans"], notes["Team charter"]]
    _bulk(admin_client, "set_entries_status", two, status="archived", reason="done with it")
    assert {Entry.objects.get(pk=e.pk).status for e in two} == {"archived"}
    two = [Entry.objects.get(pk=e.pk) for e in two]
    response = _bulk(admin_client, "verify_entries", two, reason="read them both")
    assert b"Verified 2 entries" in response.content
    for entry in two:
        entry.refresh_from_db()
        assert entry.verified_by == staff
        assert entry.history.first().history_change_reason == "read them both"


def test_bulk_changes_refuse_what_the_person_may_only_read(client, notes, project):
    from django.contrib.auth.models import Permission

    reader = UserFactory(username="rita", is_staff=True)
    reader.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    Membership.objects.create(project=project, user=reader, role=Role.VIEWER)
    client.force_login(reader)
    entry = notes["Team charter"]
    response = _bulk(client, "set_entries_status", [entry], status="archived", reason="x")
    assert b"Not changed: Team charter" in response.content
    assert b"editor role" in response.content
    assert Entry.objects.get(pk=entry.pk).status == "active"


# --- the editor's live preview -------------------------------------------------------------------


def _live(client, **fields):
    return client.post(reverse("admin:knowledge_entry_live_preview"), fields).content.decode()


def test_the_live_preview_marks_links_resolved_or_missing(admin_client, notes, project):
    html = _live(
        admin_client,
        text="See [[Database backups]] and [[Nobody wrote this]].\n\n"
        "- [decision] Keep nightly dumps #backup (agreed)\n"
        "- depends_on [[Deployment checklist]]\n<script>alert(1)</script>",
        project=str(project.pk),
        subtopic_path="ops",
        title="A new note",
    )
    assert re.search(r'class="resolved" data-target="Database backups".*?Database backups', html)
    assert 'class="missing" data-target="Nobody wrote this"' in html
    assert re.search(r"depends_on</span> → <a [^>]+>Deployment checklist", html)
    assert "[decision]</span> Keep nightly dumps" in html and "#backup" in html
    assert "<script" not in html  # rendered and sanitized by the server
    assert "already exists" not in html


def test_the_live_preview_says_a_title_is_taken_before_saving(admin_client, notes, project):
    html = _live(admin_client, text="x", project=str(project.pk), subtopic_path="Ops",
                 title="deployment CHECKLIST")  # fmt: skip
    assert "already exists in acme/ops" in html
    entry = notes["Deployment checklist"]
    editing = _live(admin_client, text="x", project=str(project.pk), subtopic_path="ops",
                    title="Deployment checklist", entry=str(entry.pk))  # fmt: skip
    assert "already exists" not in editing  # its own title


def test_the_live_preview_resolves_nothing_the_person_cannot_read(client, project, notes):
    hidden = ProjectFactory(slug="secret", sensitivity="restricted")
    EntryFactory(project=hidden, title="Hidden plan", body="x")
    person = UserFactory(username="eve", is_staff=True)
    Membership.objects.create(project=project, user=person, role=Role.EDITOR)
    client.force_login(person)
    html = _live(client, text="[[secret/Hidden plan]]", project=str(project.pk))
    assert 'class="missing"' in html and "Hidden plan</a>" not in html


def test_the_live_preview_needs_staff_and_bounds_the_body(admin_client, settings):
    from django.test import Client

    response = Client().post(reverse("admin:knowledge_entry_live_preview"), {"text": "x"})
    assert response.status_code == 302
    settings.CAIRN_MAX_BODY_BYTES = 100
    assert "over the limit of 100 bytes" in _live(admin_client, text="y" * 101)


def test_the_change_form_has_the_editor_beside_its_preview(admin_client, notes):
    entry = notes["Team charter"]
    page = admin_client.get(reverse("admin:knowledge_entry_change", args=[entry.pk]))
    html = page.content.decode()
    assert 'class="cairn-editor"' in html and 'id="cairn-live"' in html
    assert "Ctrl+S" in html
    assert "autocomplete" in html  # the project field
    assert f'name="version" value="{entry.version}"' in html  # a later save can conflict
    assert "knowledge/pygments.css" in html  # code in the preview is coloured as on the page


def test_the_live_preview_highlights_code_like_the_entry_page(admin_client):
    html = _live(admin_client, text="```python\ndef kettle():\n    return 1\n```")
    assert 'class="highlight"' in html and '<span class="k">def</span>' in html


# --- a conflicting save --------------------------------------------------------------------------


def _form(entry, **changes):
    data = {
        "project": entry.project_id, "subtopic_path": entry.subtopic.path if entry.subtopic_id
        else "", "title": entry.title, "body": entry.body, "kind": entry.kind,
        "tags_text": ", ".join(entry.tags), "status": entry.status, "searchable": "on",
        "metadata": "{}", "version": entry.version,
    }  # fmt: skip
    return data | changes


def test_a_conflicting_save_reopens_with_the_text_and_a_diff(admin_client, notes):
    entry = notes["Team charter"]
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    entry_update(actor=_sam(), ref=entry.pk, fields=EntryFields(body="How we work, by Sam."))
    response = admin_client.post(url, _form(entry, body="How we work together, my edit."))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Someone changed this entry since you opened it (now version 2" in html
    assert "How we work together, my edit." in html  # the person's text, still in the form
    assert 'id="cairn-conflict"' in html
    assert '<span class="del">-How we work, by Sam.</span>' in html
    assert '<span class="add">+How we work together, my edit.</span>' in html
    assert 'name="version" value="2"' in html  # the next save is made with the diff seen
    assert Entry.objects.get(pk=entry.pk).body == "How we work, by Sam."
    again = admin_client.post(url, _form(entry, body="Merged text.", version=2))
    assert again.status_code == 302
    saved = Entry.objects.get(pk=entry.pk)
    assert (saved.body, saved.version) == ("Merged text.", 3)


# --- what pages cost -----------------------------------------------------------------------------


def _fill(actor, start: int, stop: int) -> None:
    for i in range(start, stop):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic=f"area-{i % 3}/deep-{i % 2}",
            fields=EntryFields(title=f"Note {i}", body=f"launch step {i}", tags=["t"]),
        )


def _queries(client, url: str, **params) -> int:
    # Asked once first: a new query's round trips depend on whether its vector is ready before
    # the text SQL runs (a race with the embedding thread); a repeated one's vector is cached.
    assert client.get(url, params).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, params).status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    ("params", "most"),
    [({}, 14), ({"tree": "acme/area-1"}, 14), ({"q": "launch step"}, 22)],
    ids=["list", "tree", "search"],
)
def test_the_entry_list_costs_the_same_for_more_entries(admin_client, actor, project, params,
                                                        most):  # fmt: skip
    _fill(actor, 0, 3)
    small = _queries(admin_client, CHANGELIST, **params)
    _fill(actor, 3, 30)
    large = _queries(admin_client, CHANGELIST, **params)
    assert large == small <= most, f"{params}: {small} queries for 3 entries, {large} for 30"


def test_the_change_form_and_preview_cost_a_constant_number_of_queries(admin_client, actor,
                                                                        project):  # fmt: skip
    _fill(actor, 0, 3)
    entry = Entry.objects.get(title="Note 1")
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    small = _queries(admin_client, url)
    few = "[[Note 0]] [[Note 2]] [[Missing]]"
    with CaptureQueriesContext(connection) as preview_small:
        _live(admin_client, text=few, project=str(project.pk), title="x")
    _fill(actor, 3, 30)
    many = " ".join(f"[[Note {i}]]" for i in range(25)) + " [[Missing]]"
    with CaptureQueriesContext(connection) as preview_large:
        _live(admin_client, text=many, project=str(project.pk), title="x")
    assert _queries(admin_client, url) == small
    assert len(preview_large) == len(preview_small)


# --- moving a subtopic with its entries ----------------------------------------------------------


def test_moving_a_subtopic_moves_its_entries_as_revisions(admin_client, notes, project):
    url = reverse("admin:knowledge_subtopic_move")
    form = admin_client.get(url, {"project": project.pk, "path": "ops"})
    assert b'value="ops"' in form.content
    response = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "Archive > Ops", "reason": "archived"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?tree=acme%2Farchive%2Fops")
    moved = {e.title: e for e in Entry.objects.filter(project=project)}
    assert moved["Deployment checklist"].subtopic.path == "archive/ops"
    assert moved["Database backups"].subtopic.path == "archive/ops/storage"
    assert moved["Holiday plans"].subtopic.path == "people"
    for title in ("Deployment checklist", "Database backups"):
        assert moved[title].version == 2
        assert moved[title].history.first().history_change_reason == "archived"


def test_a_subtopic_move_that_would_collide_moves_nothing(admin_client, notes, project):
    EntryFactory(project=project, subtopic="archive", title="Deployment checklist", body="old")
    url = reverse("admin:knowledge_subtopic_move")
    response = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "archive", "reason": "x"}
    )
    assert response.status_code == 200
    assert b"already has an entry titled" in response.content
    assert Entry.objects.get(pk=notes["Database backups"].pk).subtopic.path == "ops/storage"
    into_itself = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "ops/inner", "reason": "x"}
    )
    assert b"itself or below itself" in into_itself.content


# --- the index -----------------------------------------------------------------------------------


def test_the_index_shows_recent_changes_open_items_and_backlogs(admin_client, notes, actor):
    call = EntryFields(title="Call back Dana", body="x", status="open")
    entry_upsert(actor=actor, project="acme", fields=call)
    html = admin_client.get("/admin/").content.decode()
    assert 'id="cairn-dashboard"' in html
    assert "Call back Dana" in html and "Team charter" in html
    assert "Parked revisions" in html and "Embedding backlog" in html
    _fill(actor, 0, 10)
    backlog_snapshot_take(actor=Actor.system())
    with CaptureQueriesContext(connection) as before:
        admin_client.get("/admin/")
    _fill(actor, 10, 30)
    for hours in range(1, 24 * 30, 7):  # the backlogs' history over the plotted 30 days
        backlog_snapshot_take(actor=Actor.system(), now=timezone.now() - timedelta(hours=hours))
    with CaptureQueriesContext(connection) as after:
        admin_client.get("/admin/")
    assert len(after) == len(before)


def test_the_subtopic_list_costs_the_same_for_a_bigger_tree(admin_client, actor, project):
    url = reverse("admin:knowledge_subtopic_changelist")
    _fill(actor, 0, 3)
    small = _queries(admin_client, url)
    _fill(actor, 3, 30)  # more subtopics, more entries in each
    assert _queries(admin_client, url) == small


def test_the_dashboard_plots_link_to_their_lists(admin_client, notes, actor, project):
    html = admin_client.get("/admin/").content.decode()
    keys = ("writes", "searches", "open", "waiting", "embedding", "parked", "mirror", "projects",
            "kinds")  # fmt: skip
    for key in keys:
        assert f'data-plot="{key}"' in html, key
    assert f"?project__id__exact={project.pk}" in html  # a project's bar opens its entries
    assert "?kind__exact=note" in html
    assert "operation__exact=search" in html
    assert html.count('<rect class="hit"') >= 30 * 5  # a link per day in each day plot
    assert "style=" not in html.split('id="cairn-dashboard"')[1]  # colours come from the CSS


def test_timings_are_for_superusers_on_the_dashboard_and_in_the_menu(client, notes, project):
    from django.contrib.auth.models import Permission

    person = UserFactory(username="sam-staff", is_staff=True)
    person.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    client.force_login(person)
    html = client.get("/admin/").content.decode()
    assert 'data-plot="writes"' in html
    assert 'data-plot="searches"' not in html
    assert "Operation timings" not in html
