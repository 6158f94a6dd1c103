"""An entry's metadata on the admin form: the note type's fields as inputs of their type, other
keys as key/value rows; the stored JSON comes back the same when nothing was changed, typed
values are stored typed, and a strict project refuses on the form with the field marked."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db

SCHEMA = """```yaml
role: string, job title
level?: integer
tier?(enum): [gold, silver]
remote?: boolean
langs?(array): string
```"""
STORED = {
    "role": "SRE",
    "level": 3,
    "tier": "gold",
    "remote": True,
    "langs": ["go", "python"],
    "extra": {"a": [1, 2]},
    "note": "123",  # a string that reads as a number stays a string
}


@pytest.fixture
def tom(staff, project):
    me = Actor.for_user(staff)
    entry_upsert(actor=me, project="acme", fields=EntryFields(title="person", kind="schema",
                                                              body=SCHEMA))  # fmt: skip
    return entry_upsert(
        actor=me,
        project="acme",
        fields=EntryFields(title="Tom", kind="person", body="Tom runs the pager.",
                           metadata=STORED),
    ).entry  # fmt: skip


class _Form(HTMLParser):
    """The values a browser would send for the page's entry form."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, str] = {}
        self._select = self._textarea = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "checkbox", "radio"):
            self.data[name] = a.get("value", "")
        elif tag == "input" and name and "checked" in a:
            self.data[name] = a.get("value", "on")
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value", "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data.removeprefix("\n")


def _page(client, entry):
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    response = client.get(url)
    assert response.status_code == 200
    form = _Form()
    form.feed(response.content.decode())
    return url, response.content.decode(), form.data


def test_the_note_types_fields_are_inputs_and_other_keys_are_rows(admin_client, tom):
    _, html, data = _page(admin_client, tom)
    assert data["metadata__f_role"] == "SRE"
    assert data["metadata__f_level"] == "3"
    assert data["metadata__f_tier"] == "gold"  # a select of the enum
    assert '<option value="silver">silver</option>' in html
    assert data["metadata__f_remote"] == "true"
    assert data["metadata__f_langs"] == "go, python"
    rows = {data[k]: data[k.replace("__k_", "__v_")] for k in data if "__k_" in k and data[k]}
    assert rows == {"extra": '{"a": [1, 2]}', "note": "123"}
    assert 'name="metadata"' not in html  # no raw JSON textarea


def test_saving_without_changes_keeps_the_stored_json(admin_client, tom):
    url, _, data = _page(admin_client, tom)
    response = admin_client.post(url, {**data, "_continue": "1"})
    assert response.status_code == 302, response.content.decode()[:2000]
    saved = Entry.objects.get(pk=tom.pk).metadata
    assert json.dumps(saved, sort_keys=True) == json.dumps(STORED, sort_keys=True)


def test_typed_values_are_stored_typed_and_new_keys_added(admin_client, tom):
    url, _, data = _page(admin_client, tom)
    empty = next(k for k in data if "__k_" in k and not data[k])
    note = next(k for k in data if "__k_" in k and data[k] == "note")
    data.update({
        "metadata__f_level": "4", "metadata__f_tier": "silver", "metadata__f_remote": "false",
        "metadata__f_langs": "rust", empty: "pager", empty.replace("__k_", "__v_"): "true",
        note.replace("__k_", "__v_"): "",  # the "note" row emptied: the key goes
    })  # fmt: skip
    response = admin_client.post(url, {**data, "_continue": "1"})
    assert response.status_code == 302
    saved = Entry.objects.get(pk=tom.pk).metadata
    assert saved == {"role": "SRE", "level": 4, "tier": "silver", "remote": False,
                     "langs": ["rust"], "extra": {"a": [1, 2]}, "pager": True}  # fmt: skip


def test_a_strict_project_refuses_on_the_form_with_the_field_marked(admin_client, tom, project):
    project.schema_mode = "strict"
    project.save(update_fields=["schema_mode"])
    url, _, data = _page(admin_client, tom)
    data["metadata__f_level"] = "many"
    response = admin_client.post(url, {**data, "_continue": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="cairn-meta-field error" data-field="level"' in html
    assert "Does not fit the schema: level" in html
    assert 'value="many"' in html  # what the person typed is kept
    assert Entry.objects.get(pk=tom.pk).metadata == STORED


def test_raw_json_is_still_accepted(admin_client, tom):
    """A client that sends the metadata as JSON (the stock form's way) still can."""
    url, _, data = _page(admin_client, tom)
    raw = {k: v for k, v in data.items() if not k.startswith("metadata__")}
    raw["metadata"] = json.dumps({"role": "Lead"})
    assert admin_client.post(url, {**raw, "_continue": "1"}).status_code == 302
    assert Entry.objects.get(pk=tom.pk).metadata == {"role": "Lead"}
