"""Source URLs are link targets on the entry page: only http, https and mailto (and schemes an
administrator adds) are stored; anything else is refused on every surface, older rows are
neutralised by migration 0005, and the page never links a URL it would refuse."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps

from knowledge.errors import ValidationFailed
from knowledge.models import Entry, Source
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db

V1 = "/api/v1"
DANGEROUS = [
    "javascript:alert(document.cookie)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "\x01javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example/x",
    "evil.example/x",
]


def _write(actor, url: str, **source):
    return entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Sourced", body="b"),
        sources=[{"kind": "url", "external_id": "x1", "url": url, **source}],
    )


@pytest.mark.parametrize("url", DANGEROUS)
def test_a_source_url_with_a_scheme_that_is_not_a_link_is_refused(actor, project, url):
    with pytest.raises(ValidationFailed) as refused:
        _write(actor, url)
    assert refused.value.data["field"] == "sources.url"
    assert "http:, https:, mailto:" in refused.value.message
    assert not Entry.objects.exists() and not Source.objects.exists()


@pytest.mark.parametrize(
    "url", ["https://example.org/a?b=c", "HTTP://example.org", "mailto:dana@example.org", ""]
)
def test_http_https_mailto_and_no_url_are_kept(actor, project, url):
    _write(actor, f"  {url} ")
    assert Source.objects.get().url == url


def test_a_setting_adds_schemes_but_never_script_ones(actor, project, settings):
    settings.CAIRN_SOURCE_URL_SCHEMES = ["Zotero", "javascript"]
    _write(actor, "zotero://select/items/ABC")
    assert Source.objects.get().url == "zotero://select/items/ABC"
    with pytest.raises(ValidationFailed) as refused:
        _write(actor, "javascript:alert(1)", external_id="x2")
    assert "zotero:" in refused.value.message and "javascript:" not in refused.value.data["allowed"]


@pytest.mark.parametrize(
    ("field", "size"), [("external_id", 501), ("title", 501), ("url", 2001), ("kind", 41)]
)
def test_source_fields_are_bounded_by_name(actor, project, field, size):
    fields = {"url": "https://example.org/", field: "a" * size}
    if field == "url":
        fields["url"] += "a" * size
    with pytest.raises(ValidationFailed) as refused:
        _write(actor, **fields)
    assert refused.value.data["field"] == f"sources.{field}"
    assert not Entry.objects.exists()


def test_rest_answers_422_naming_the_field_and_schemes(api):
    response = api.put(
        f"{V1}/entries",
        {
            "project": "acme",
            "title": "Sourced",
            "sources": [{"kind": "url", "external_id": "x1", "url": "javascript:alert(1)"}],
        },
        content_type="application/json",
    )
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == "sources.url" and "https:" in body["detail"]
    assert not Entry.objects.exists()


def test_the_migration_moves_an_unlinkable_url_into_the_title(actor, project):
    _write(actor, "https://example.org/ok")
    ok = Source.objects.get()
    bad = Source.objects.create(project=project, kind="url", external_id="x2", url="data:,x")
    evil = Source.objects.create(
        project=project, kind="url", external_id="x3", url=" JavaScript:alert(1)", title="Ticket"
    )
    migration = importlib.import_module("knowledge.migrations.0005_source_url_schemes")
    assert migration.neutralise_source_urls(django_apps, None) == 2
    bad.refresh_from_db(), evil.refresh_from_db(), ok.refresh_from_db()
    assert (bad.url, bad.title) == ("", "data:,x")
    assert (evil.url, evil.title) == ("", "Ticket ( JavaScript:alert(1))")
    assert ok.url == "https://example.org/ok"


def test_the_entry_page_never_links_a_url_it_would_refuse(client, user, actor, project):
    entry = _write(actor, "https://example.org/fine").entry
    # A row from before the check (or written by hand): the page must not make it a link.
    entry.sources.add(
        Source.objects.create(
            project=project, kind="url", external_id="x2", url="java\tscript:alert(1)", title="T2"
        )
    )
    client.force_login(user)
    html = client.get(f"/e/{entry.short_id}/").content.decode()
    assert 'href="https://example.org/fine"' in html
    assert "script:alert" not in html and "T2" in html
