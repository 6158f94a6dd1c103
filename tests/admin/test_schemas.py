"""Schemas in the admin: a schema entry's page shows its parsed fields; a save meets the
project's schema_mode on the form (strict: an error naming each field and the version, with
the text kept; warn: a message after the save); the live preview shows the fit before saving."""

from __future__ import annotations

import pytest
from django.urls import reverse

from knowledge.models import Entry
from knowledge.services import EntryFields, entry_upsert
from tests.admin.forms import project_form
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db

SCHEMA = (
    "```yaml\nrole: string, job title\nlevel?(enum): [junior, senior]\n"
    "works_at?: Organization\ncontact?(object):\n  email: string\n```\n"
)


def write(actor, title, body, *, kind="person"):
    return entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title=title, body=body, kind=kind)
    ).entry


@pytest.fixture
def schema(actor, project):
    return write(actor, "person", SCHEMA, kind="schema")


def set_mode(project, mode):
    project.schema_mode = mode
    project.save(update_fields=["schema_mode"])


def form(project, **changes):
    data = {
        "project": project.pk, "subtopic_path": "", "title": "Ada", "body": "No role here.",
        "kind": "person", "tags_text": "", "status": "active", "searchable": "on",
        "metadata": "{}",
    }  # fmt: skip
    return data | changes


def test_a_schema_entry_page_shows_its_parsed_fields(admin_client, schema):
    page = html(admin_client.get(reverse("admin:knowledge_entry_change", args=[schema.pk])))
    table = page.split('id="cairn-schema-fields"', 1)[1].split("</table>", 1)[0]
    assert f"person entries, version {schema.version}: 4 fields" in table
    role = table.split('data-field="role"', 1)[1].split("</tr>", 1)[0]
    assert "string" in role and "required" in role and "job title" in role
    level = table.split('data-field="level"', 1)[1].split("</tr>", 1)[0]
    assert "optional" in level and "junior, senior" in level
    assert "relation → Organization" in table
    assert 'data-field="contact.email"' in table


def test_other_entries_have_no_schema_table(admin_client, actor, schema):
    ada = write(actor, "Ada", "- [role] Engineer")
    page = html(admin_client.get(reverse("admin:knowledge_entry_change", args=[ada.pk])))
    assert "cairn-schema-fields" not in page


def test_strict_refuses_an_admin_save_on_the_form_naming_each_field_and_the_version(
    admin_client, project, schema
):
    set_mode(project, "strict")
    response = admin_client.post(
        reverse("admin:knowledge_entry_add"), form(project, body="- [level] boss")
    )
    page = html(response)
    assert response.status_code == 200 and 'class="errornote ' in page  # the theme's banner
    assert f"version {schema.version}" in page and schema.short_id in page
    assert '<li data-field="role"><strong>role</strong>: role is missing' in page
    assert '<li data-field="level">' in page and "not one of junior, senior" in page
    assert "- [level] boss" in page  # the person's text is kept on the form
    assert not Entry.objects.filter(title="Ada").exists()


def test_strict_refuses_an_admin_edit_and_keeps_the_stored_version(
    admin_client, actor, project, schema
):
    ada = write(actor, "Ada", "- [role] Engineer")
    set_mode(project, "strict")
    url = reverse("admin:knowledge_entry_change", args=[ada.pk])
    response = admin_client.post(url, form(project, body="Dropped the role.", version=1))
    assert response.status_code == 200 and "role is missing" in html(response)
    assert "Dropped the role." in html(response)
    assert Entry.objects.get(pk=ada.pk).version == 1
    fixed = admin_client.post(url, form(project, body="- [role] CTO", version=1))
    assert fixed.status_code == 302 and Entry.objects.get(pk=ada.pk).version == 2


def test_warn_saves_an_admin_edit_and_says_what_is_missing(admin_client, project, schema):
    set_mode(project, "warn")
    response = admin_client.post(reverse("admin:knowledge_entry_add"), form(project), follow=True)
    page = html(response)
    assert Entry.objects.filter(title="Ada").exists()
    assert "Saved, but this entry does not fit the person schema" in page
    assert f"version {schema.version}" in page and "role is missing" in page


def test_off_saves_without_a_schema_message(admin_client, project, schema):
    response = admin_client.post(reverse("admin:knowledge_entry_add"), form(project), follow=True)
    assert Entry.objects.filter(title="Ada").exists()
    assert "does not fit" not in html(response)


def _live(client, **fields):
    return html(client.post(reverse("admin:knowledge_entry_live_preview"), fields))


def test_the_live_preview_shows_misfits_before_saving(admin_client, project, schema):
    set_mode(project, "strict")
    page = _live(admin_client, text="- [level] boss", project=str(project.pk), kind="Person")
    block = page.split('id="cairn-live-schema"', 1)[1].split("</section>", 1)[0]
    assert "Does not fit the person schema" in block and f"version {schema.version}" in block
    assert 'data-field="role"' in block and 'data-field="level"' in block
    assert "saving would be refused" in block
    fits = _live(admin_client, text="- [role] CTO", project=str(project.pk), kind="person")
    assert "fits</span> the person schema" in fits


def test_the_live_preview_reads_tags_status_and_metadata_from_the_form(
    admin_client, actor, project
):
    write(actor, "memo", "```yaml\ntags: string\nowner: string\n```", kind="schema")
    bare = _live(admin_client, text="x", project=str(project.pk), kind="memo")
    assert 'data-field="tags"' in bare and 'data-field="owner"' in bare
    full = _live(admin_client, text="x", project=str(project.pk), kind="memo",
                 tags="a, b", metadata='{"owner": "ops"}')  # fmt: skip
    assert "fits</span> the memo schema" in full


def test_the_live_preview_parses_a_schema_draft(admin_client, project):
    page = _live(admin_client, text=SCHEMA, project=str(project.pk), kind="schema", title="person")
    assert 'id="cairn-schema-fields"' in page and 'data-field="contact.email"' in page
    broken = _live(admin_client, text="```yaml\nrole: strnig\n```", kind="schema", title="p")
    assert "This schema does not parse" in broken and "Saving would be refused" in broken


def test_the_live_preview_says_nothing_of_schemas_without_one(admin_client, project, schema):
    page = _live(admin_client, text="x", project=str(project.pk), kind="note")
    assert "cairn-live-schema" not in page
    hidden = _live(admin_client, text="x", project="nope", kind="person")
    assert "cairn-live-schema" not in hidden


def test_a_maintainer_sets_the_schema_mode_on_the_project_page(admin_client, project):
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    assert 'name="schema_mode"' in html(admin_client.get(url))
    response = admin_client.post(url, project_form(project, schema_mode="strict"))
    assert response.status_code == 302, html(response)[:2000]
    project.refresh_from_db()
    assert project.schema_mode == "strict"
    assert project.history.first().history_change_reason == "edited in the admin"


def test_a_project_save_without_the_schema_mode_keeps_it(admin_client, project):
    set_mode(project, "warn")
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    response = admin_client.post(url, project_form(project, name="Acme Two"))
    assert response.status_code == 302, html(response)[:2000]
    project.refresh_from_db()
    assert (project.name, project.schema_mode) == ("Acme Two", "warn")


def test_an_unknown_schema_mode_is_refused_on_the_form(admin_client, project):
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    response = admin_client.post(url, project_form(project, schema_mode="loose"))
    assert response.status_code == 200 and "Select a valid choice" in html(response)
    project.refresh_from_db()
    assert project.schema_mode == "off"


def test_a_new_project_starts_with_schemas_off(admin_client):
    page = html(admin_client.get(reverse("admin:knowledge_project_add")))
    assert 'name="slug"' in page and 'name="schema_mode"' not in page
