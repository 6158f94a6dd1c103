"""The entry editor: its live preview (links resolved or missing, a taken title, nothing the
person cannot read, staff only and bounded, code highlighted) beside the form, and a conflicting
save that reopens with the person's text and a diff."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from knowledge.models import Entry, Membership, Role
from knowledge.services import EntryFields, entry_update
from tests.admin.workbench import live, sam
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_live_preview_marks_links_resolved_or_missing(admin_client, notes, project):
    html = live(
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
    html = live(admin_client, text="x", project=str(project.pk), subtopic_path="Ops",
                 title="deployment CHECKLIST")  # fmt: skip
    assert "already exists in acme/ops" in html
    entry = notes["Deployment checklist"]
    editing = live(admin_client, text="x", project=str(project.pk), subtopic_path="ops",
                    title="Deployment checklist", entry=str(entry.pk))  # fmt: skip
    assert "already exists" not in editing  # its own title


def test_the_live_preview_resolves_nothing_the_person_cannot_read(client, project, notes):
    hidden = ProjectFactory(slug="secret", sensitivity="restricted")
    EntryFactory(project=hidden, title="Hidden plan", body="x")
    person = UserFactory(username="eve", is_staff=True)
    Membership.objects.create(project=project, user=person, role=Role.EDITOR)
    client.force_login(person)
    html = live(client, text="[[secret/Hidden plan]]", project=str(project.pk))
    assert 'class="missing"' in html and "Hidden plan</a>" not in html


def test_the_live_preview_needs_staff_and_bounds_the_body(admin_client, settings):
    from django.test import Client

    response = Client().post(reverse("admin:knowledge_entry_live_preview"), {"text": "x"})
    assert response.status_code == 302
    settings.CAIRN_MAX_BODY_BYTES = 100
    assert "over the limit of 100 bytes" in live(admin_client, text="y" * 101)


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
    html = live(admin_client, text="```python\ndef kettle():\n    return 1\n```")
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
    entry_update(actor=sam(), ref=entry.pk, fields=EntryFields(body="How we work, by Sam."))
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
