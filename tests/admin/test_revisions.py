"""Admin: revision list with who/when/why/commit, diff between two revisions, revert."""

import pytest

from history import mirror
from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_update, entry_upsert

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.admin.urls")]


@pytest.fixture
def entry(staff, project):
    actor = Actor.for_user(staff)
    e = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one\ntwo\n")
    ).entry
    entry_update(
        actor=actor,
        ref=e.pk,
        fields=EntryFields(body="one\n<b>three</b>\n"),
        reason="second thoughts",
    )
    mirror.drain()
    return Entry.objects.get(pk=e.pk)


@pytest.fixture
def browser(client, staff):
    client.force_login(staff)
    return client


def test_history_page_lists_revisions_with_commit(browser, entry):
    page = browser.get(f"/admin/knowledge/entry/{entry.pk}/history/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "second thoughts" in html
    commit = entry.history.order_by("-history_id").first().git_commit
    assert commit[:10] in html
    assert f"/admin/knowledge/entry/{entry.pk}/history/revert/1/" in html


def test_diff_page_shows_both_modes_and_escapes_html(browser, entry):
    url = f"/admin/knowledge/entry/{entry.pk}/history/diff/"
    side = browser.get(url, {"from": 1, "to": 2}).content.decode()
    assert "diff_add" in side or "diff_chg" in side
    assert "&lt;b&gt;three&lt;/b&gt;" in side and "<b>three</b>" not in side
    unified = browser.get(url, {"from": 1, "to": 2, "mode": "unified"}).content.decode()
    assert '<span class="add">+&lt;b&gt;three&lt;/b&gt;</span>' in unified
    assert '<span class="del">-two</span>' in unified


def test_a_large_rewrite_is_shown_side_by_side_in_time(browser, staff, entry):
    # HtmlDiff took 4 s for 200 rewritten lines and 58 s for 800; the table is built from
    # knowledge.diffs' opcodes now, so the admin neither waits nor falls back.
    import time

    actor = Actor.for_user(staff)
    old = "".join(f"line {i} of the old plan, with words\n" for i in range(800))
    new = "".join(f"row {i} in the new plan, other words\n" for i in range(800))
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=old))
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=new))
    url = f"/admin/knowledge/entry/{entry.pk}/history/diff/"
    start = time.perf_counter()
    page = browser.get(url, {"from": 3, "to": 4}).content.decode()
    assert time.perf_counter() - start < 2
    assert "too large to show side by side" not in page and '<table class="diff">' in page
    assert '<span class="diff_chg">row 799 in the new plan, other</span> words' in page


def test_revert_from_the_admin_goes_through_the_service(browser, entry):
    url = f"/admin/knowledge/entry/{entry.pk}/history/revert/1/"
    confirm = browser.get(url)
    assert confirm.status_code == 200 and "new</strong> version 3" in confirm.content.decode()
    done = browser.post(url, {"reason": "back to the first plan", "expected_version": 2})
    assert done.status_code == 302
    entry.refresh_from_db()
    assert (entry.version, entry.body) == (3, "one\ntwo\n")
    latest = entry.history.order_by("-history_id").first()
    assert latest.history_change_reason == "back to the first plan"
    assert latest.git_commit == ""  # pending, like any other write


def test_revert_to_an_unknown_version_says_so_and_goes_back(browser, entry):
    page = browser.get(f"/admin/knowledge/entry/{entry.pk}/history/revert/9/", follow=True)
    assert "has no version 9" in page.content.decode()
