"""The entry page: sanitized Markdown and its facts, the ETag, history and diffs, verifying and
setting the status from the page (and who may), hidden and superseded entries, and a body that
is rendered once per version and cannot pose as the page around it."""

from __future__ import annotations

import pytest
from django.test import Client

from history import mirror
from knowledge.models import Entry, Membership, Role
from knowledge.services import EntryFields, entry_correct, entry_update
from tests.factories import UserFactory
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db


def test_entry_page_renders_sanitized_markdown_and_its_facts(alice, plan):
    response = alice.get(f"/e/{plan.short_id}/")
    page = html(response)
    assert response.status_code == 200
    assert "<strong>bold</strong>" in page and "<table>" in page
    assert 'class="highlight"' in page and '<span class="k">def</span>' in page
    assert 'type="checkbox" disabled=""' in page and 'checked=""' in page
    assert "<script>alert" not in page and "onerror" not in page and "javascript:" not in page
    assert f"memory://acme/ops/2026/{plan.slug}" in page
    assert "https://example.org/s1" in page and "decision" in page and "#launch" in page
    assert "Version</dt><dd>2" in page
    assert page.count('name="from"') == 2  # history with both revisions
    assert "/admin/knowledge/entry/" not in page  # alice is not staff


def test_entry_page_has_an_etag_and_answers_304_when_unchanged(alice, actor, plan):
    first = alice.get(f"/e/{plan.short_id}/")
    assert "private" in first["Cache-Control"] and "no-cache" in first["Cache-Control"]
    again = alice.get(f"/e/{plan.short_id}/", headers={"if-none-match": first["ETag"]})
    assert again.status_code == 304
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="changed"))
    after = alice.get(f"/e/{plan.short_id}/", headers={"if-none-match": first["ETag"]})
    assert after.status_code == 200 and "changed" in html(after)


def test_history_shows_the_commit_once_the_mirror_ran(alice, plan):
    mirror.drain()
    commit = plan.history.order_by("-history_id").first().git_commit
    assert commit and commit[:10] in html(alice.get(f"/e/{plan.short_id}/"))


def test_diff_between_two_versions_escapes_the_text(alice, actor, plan):
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="<b>bold</b> new\n"))
    page = html(alice.get(f"/e/{plan.short_id}/diff/?from=1&to=3"))
    assert '<span class="add">+&lt;b&gt;bold&lt;/b&gt; new</span>' in page
    assert '<span class="del">-' in page and "<b>bold</b>" not in page
    same = html(alice.get(f"/e/{plan.short_id}/diff/?from=2&to=2"))
    assert "read the same" in same
    assert alice.get(f"/e/{plan.short_id}/diff/?from=9").status_code == 404
    assert alice.get(f"/e/{plan.short_id}/diff/?from=x").status_code == 404


def test_a_person_verifies_from_the_page(alice, user, plan):
    response = alice.post(f"/e/{plan.short_id}/verify/", {"version": plan.version}, follow=True)
    entry = Entry.objects.get(pk=plan.pk)
    assert entry.verified_by == user and entry.version == plan.version
    assert "Verified version 2" in html(response) and "✓ verified" in html(response)


def test_a_stale_page_does_not_verify(alice, actor, plan):
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="newer"))
    response = alice.post(f"/e/{plan.short_id}/verify/", {"version": 2}, follow=True)
    assert "changed since version 2" in html(response)
    assert Entry.objects.get(pk=plan.pk).verified_at is None


def test_set_status_from_the_page(alice, plan):
    alice.post(f"/e/{plan.short_id}/status/", {"status": "open", "version": 2})
    assert Entry.objects.get(pk=plan.pk).status == "open"
    bad = alice.post(f"/e/{plan.short_id}/status/", {"status": "nonsense"}, follow=True)
    assert "nonsense" in html(bad) and Entry.objects.get(pk=plan.pk).status == "open"


def test_a_viewer_reads_but_cannot_verify_or_change(plan, project):
    viewer = UserFactory(username="vic")
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    page = html(client.get(f"/e/{plan.short_id}/"))
    assert "Launch plan" in page and "/verify/" not in page  # no action forms
    refused = client.post(f"/e/{plan.short_id}/verify/", {"version": 2})
    assert "editor role" in html(refused, 403)
    client.post(f"/e/{plan.short_id}/status/", {"status": "open", "version": 2})
    entry = Entry.objects.get(pk=plan.pk)
    assert entry.verified_at is None and entry.status == "active"


def test_actions_need_post(alice, plan):
    assert alice.get(f"/e/{plan.short_id}/verify/").status_code == 405


def test_hidden_entries_answer_like_missing_ones(alice, hidden):
    missing = alice.get("/e/zzzzzzzz/")
    hidden_page = alice.get(f"/e/{hidden.short_id}/")
    assert hidden_page.status_code == missing.status_code == 404
    assert "zebracorn" not in html(hidden_page, 404).lower()
    assert alice.get("/p/vault/").status_code == 404


def test_superseded_links_both_ways(alice, actor, plan):
    corrected = entry_correct(actor=actor, ref=plan.pk, body="right", reason="was wrong")
    new, old = corrected.entry, corrected.superseded
    old_page = html(alice.get(f"/e/{old.short_id}/"))
    assert f'href="/e/{new.short_id}/"' in old_page and "Superseded by" in old_page
    assert f'href="/e/{old.short_id}/"' in html(alice.get(f"/e/{new.short_id}/"))


def test_the_entry_body_is_rendered_once_per_version(alice, actor, plan, monkeypatch):
    from django.core.cache import caches

    from knowledge import rendering

    for cache in caches.all():  # earlier tests may have rendered an entry with this id
        cache.clear()
    calls = []
    real = rendering.render_page_markdown
    monkeypatch.setattr(rendering, "render_page_markdown", lambda t: calls.append(t) or real(t))
    for _ in range(2):
        assert '<span class="k">def</span>' in html(alice.get(f"/e/{plan.short_id}/"))
    assert len(calls) == 1
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="# Changed\n"))
    assert 'id="md-changed"' in html(alice.get(f"/e/{plan.short_id}/"))
    assert len(calls) == 2


def test_a_body_cannot_pose_as_the_page(alice, actor, plan):
    body = (
        '## History\n\n<span class="verified">✓ verified</span> '
        '<button type="button" class="copy" data-copy="#memory-url">Copy</button>\n\n'
        "![pixel](https://tracker.example/p.png)\n"
    )
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body=body))
    page = html(alice.get(f"/e/{plan.short_id}/"))
    assert page.count('id="history"') == 1 and 'id="md-history"' in page
    assert page.count('class="verified"') == 0 and page.count('class="copy"') == 1
    assert '<img src="https://tracker.example' not in page
    assert 'href="https://tracker.example/p.png"' in page
