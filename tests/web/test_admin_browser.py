"""The admin end to end in headless Chromium (Playwright, the system browser as in
test_browser_reading.py): a staff member signs in, searches the entry list with a paraphrase,
filters it by the subtopic tree, moves two entries with a reason, edits with the live preview
showing a resolved and a missing link, hits a conflict and keeps the text, and reverts to a
version. Every page keeps to the Content-Security-Policy. Screenshots are taken (into
docs/screenshots/) with CAIRN_UPDATE_SCREENSHOTS=1."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entries_embed,
    entry_update,
    entry_upsert,
    lexeme_stats_refresh,
    project_create,
)
from tests.factories import UserFactory
from tests.web.admin_pages import shot
from tests.web.browser import PASSWORD


@pytest.fixture
def desk(live_server):
    person = UserFactory(username="dana", is_staff=True, is_superuser=True)
    person.set_password(PASSWORD)
    person.save()
    me = Actor.for_user(person)
    project_create(
        actor=me, slug="launch", fields=ProjectFields(name="Launch", description="The Q3 launch.")
    )
    notes = [
        ("checkout/rollout", "Checkout v2 rollout plan",
         "We ship behind the checkout-v2 flag, ten percent a day.\n\n"
         "- depends_on [[Rollout risks]]"),
        ("checkout", "Rollout risks", "The rollout may slow the checkout; watch p95 latency."),
        ("people", "Holiday plans",
         "Caroline is travelling to Sweden in July to see the midnight sun."),
        ("inbox", "Support FAQ draft", "Answers for support about the new checkout."),
        ("inbox", "Pricing page copy", "The words on the pricing page, first draft."),
    ]  # fmt: skip
    entries = {}
    for subtopic, title, body in notes:
        entries[title] = entry_upsert(
            actor=me,
            project="launch",
            subtopic=subtopic,
            fields=EntryFields(title=title, body=body),
        ).entry
    entries_embed(entry_ids=[e.pk for e in entries.values()])
    lexeme_stats_refresh()
    return {"url": live_server.url, "person": person, "actor": me, "entries": entries}


def messages(page: Page):
    """The theme's messages: a list at the top of the page's main column."""
    return page.locator("#main > div > div > ul").first


def sign_in(page: Page, base: str) -> None:
    page.goto(f"{base}/admin/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    expect(page).to_have_url(f"{base}/admin/")


def test_a_staff_member_searches_filters_moves_edits_and_reverts(
    desk,
    page: Page,
    requests,
    csp,
):
    base, entries = desk["url"], desk["entries"]
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, base)
    shot(page, "admin-dashboard.png")
    expect(page.locator("#cairn-dashboard")).to_contain_text("Support FAQ draft")

    # Search: a paraphrase finds the entry, with a snippet.
    page.goto(f"{base}/admin/knowledge/entry/")
    page.fill("#searchbar", "vacation trip abroad in summer")
    page.press("#searchbar", "Enter")
    first = page.locator("#result_list tbody tr").first
    expect(first.locator("th.field-title")).to_have_text("Holiday plans")
    expect(first.locator("td.field-snippet")).to_contain_text("midnight sun")
    shot(page, "admin-search.png")

    # The tree: counts include what is below; a node filters the list.
    page.goto(f"{base}/admin/knowledge/entry/")
    page.click(".filter-open-button")  # the theme's filter panel holds the tree
    checkout = page.locator('li.cairn-node[data-key="launch/checkout"]')
    expect(checkout.locator(".cairn-count").first).to_have_text("2")
    checkout.locator("summary > a").first.click()
    expect(page).to_have_url(re.compile(r"tree=launch%2Fcheckout"))
    expect(page.locator("#result_list tbody tr")).to_have_count(2)
    shot(page, "admin-tree.png")

    # Bulk move two entries with a reason: one revision each.
    page.goto(f"{base}/admin/knowledge/entry/?tree=launch%2Finbox")
    expect(page.locator("#result_list tbody tr")).to_have_count(2)
    page.locator("#action-toggle").check()
    page.select_option("select[name=action]", "move_entries")
    page.click("button[name=index]")
    expect(page.get_by_role("heading", name="Move entries to a subtopic")).to_be_visible()
    page.fill("#id_subtopic", "Support > Drafts")
    page.fill("#id_reason", "drafts belong with support")
    shot(page, "admin-bulk-move.png")
    page.click("#cairn-bulk-form input[type=submit]")
    expect(messages(page)).to_contain_text(
        "Moved 2 entries, one revision each (reason: drafts belong with support)"
    )
    for title in ("Support FAQ draft", "Pricing page copy"):
        moved = Entry.objects.get(pk=entries[title].pk)
        assert moved.subtopic.path == "support/drafts" and moved.version == 2
        assert moved.history.first().history_change_reason == "drafts belong with support"

    # The editor: the live preview lists a resolved and a missing link before saving.
    plan = entries["Checkout v2 rollout plan"]
    page.goto(f"{base}/admin/knowledge/entry/{plan.pk}/change/")
    live = page.locator("#cairn-live")
    expect(live.locator("li.resolved")).to_contain_text("Rollout risks")
    page.locator(".CodeMirror").click()
    page.keyboard.press("Control+End")
    # Inserted as typed text, without the editor continuing the list on each Enter.
    page.keyboard.insert_text("\n\nSee [[Launch retro]].\n\n- [decision] Ten percent a day\n")
    expect(live.locator("li.missing")).to_contain_text("Launch retro")
    expect(live.locator("li.resolved")).to_contain_text("Rollout risks")
    expect(live.locator("#cairn-live-observations")).to_contain_text("Ten percent a day")
    shot(page, "admin-editor.png")
    assert Entry.objects.get(pk=plan.pk).version == 1  # nothing saved yet

    # Someone else saves meanwhile: the save re-opens with the text and a diff.
    entry_update(
        actor=desk["actor"],
        ref=plan.pk,
        fields=EntryFields(body="We ship behind the checkout-v2 flag, five percent a day."),
        reason="slower",
    )
    page.keyboard.press("Control+s")  # keyboard save
    expect(page.locator("#entry_form")).to_contain_text("Someone changed this entry")
    conflict = page.locator("#cairn-conflict")
    expect(conflict.locator("pre .del", has_text="five percent a day")).to_be_visible()
    expect(conflict.locator("pre .add", has_text="Launch retro")).to_be_visible()
    expect(page.locator(".CodeMirror")).to_contain_text("[[Launch retro]]")
    shot(page, "admin-conflict.png")
    page.keyboard.press("Control+s")  # saved now, as version 3, with the diff seen
    expect(messages(page)).to_contain_text("was changed successfully")
    assert "[[Launch retro]]" in Entry.objects.get(pk=plan.pk).body

    # Revert to version 2 from the history page.
    page.goto(f"{base}/admin/knowledge/entry/{plan.pk}/history/")
    page.locator("#revisions tr", has_text="slower").locator("a:text('revert to this')").click()
    page.fill("input[name=reason]", "back to five percent")
    shot(page, "admin-revert.png")
    page.click("input[type=submit]")
    expect(messages(page)).to_contain_text("Reverted to version 2")
    reverted = Entry.objects.get(pk=plan.pk)
    assert reverted.version == 4 and "five percent" in reverted.body

    hosts = {urlsplit(url).netloc for url in requests if not url.startswith("data:")}
    assert hosts == {urlsplit(base).netloc}, f"requests left the site: {hosts}"


def test_a_schema_shows_its_fields_the_editor_its_fit_and_strict_refuses_on_the_form(
    desk,
    page: Page,
    csp,
):
    base, me = desk["url"], desk["actor"]
    schema = entry_upsert(
        actor=me,
        project="launch",
        fields=EntryFields(
            title="person",
            kind="schema",
            body="```yaml\nrole: string, job title\nteam: string\n```",
        ),
    ).entry
    tom = entry_upsert(
        actor=me,
        project="launch",
        fields=EntryFields(title="Tom", kind="person", body="- [role] SRE"),
    ).entry
    launch = tom.project
    launch.schema_mode = "strict"
    launch.save(update_fields=["schema_mode"])
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, base)

    # The schema entry's page: its fields as parsed.
    page.goto(f"{base}/admin/knowledge/entry/{schema.pk}/change/")
    fields = page.locator("#entry_form #cairn-schema-fields:not(#cairn-live *)")
    expect(fields.locator('tr[data-field="role"]')).to_contain_text("job title")
    expect(fields.locator('tr[data-field="team"]')).to_contain_text("required")

    # The editor: the live preview says what is missing while typing, and when it fits.
    page.goto(f"{base}/admin/knowledge/entry/{tom.pk}/change/")
    fit = page.locator("#cairn-live #cairn-live-schema")
    expect(fit.locator('li[data-field="team"]')).to_contain_text("team is missing")
    expect(fit).to_contain_text("saving would be refused")
    page.locator(".CodeMirror").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n- [hobby] chess\n")
    page.keyboard.press("Control+s")
    errors = page.locator("#entry_form .errornote, #entry_form .errorlist")
    expect(errors.first).to_be_visible()
    expect(page.locator('.cairn-schema-misfits li[data-field="team"]').first).to_contain_text(
        "team is missing"
    )
    expect(page.locator("#entry_form")).to_contain_text(f"version {schema.version}")
    expect(page.locator(".CodeMirror")).to_contain_text("[hobby] chess")  # the text is kept
    assert Entry.objects.get(pk=tom.pk).version == 1

    # The refused field is marked among the metadata's fields; typing it there fits.
    team = page.locator('.cairn-meta-field.error[data-field="team"]')
    expect(team).to_contain_text("team is missing")
    shot(page, "admin-refusal.png")
    page.fill("#id_metadata__f_team", "Platform")
    expect(fit).to_contain_text("fits")
    shot(page, "admin-metadata.png")
    page.keyboard.press("Control+s")
    expect(messages(page)).to_contain_text("was changed successfully")
    saved = Entry.objects.get(pk=tom.pk)
    assert saved.version == 2 and saved.metadata == {"team": "Platform"}

    # The pages: the entry fits in one line; the project counts its person entries.
    page.goto(f"{base}/e/{tom.short_id}/")
    expect(page.locator("#schema-fit")).to_contain_text("Fits the person schema")
    page.goto(f"{base}/p/launch/")
    expect(page.locator('#note-types tr[data-kind="person"]')).to_contain_text("all 1")


def _a_month_of_work(desk) -> None:
    """Thirty days of writes by a person and an agent, searches with their timings, items
    opened and a parked revision: real rows, dated back, so the plots have something to show."""
    from datetime import timedelta

    from django.utils import timezone

    from history.models import BacklogSnapshot, ParkedRevision
    from ops.models import OperationTiming

    person = desk["actor"]
    agent = Actor(user=desk["person"], agent="agent:claude-code")
    now = timezone.now()
    timings = []
    for day in range(0, 30, 2):
        who = agent if day % 4 else person
        entry = entry_upsert(
            actor=who,
            project="launch",
            subtopic="journal",
            fields=EntryFields(title=f"Standup {day}", body=f"Notes of day {day}.",
                               status="open" if day % 6 == 0 else "active",
                               kind="meeting" if day % 3 else "decision"),
        ).entry  # fmt: skip
        entry.history.filter(history_type="+").update(history_date=now - timedelta(days=day))
        for n in range(1 + day % 5):
            timings.append(OperationTiming(at=now - timedelta(days=day, minutes=n),
                                           surface="mcp", operation="search", outcome="ok",
                                           total_ms=40 + 7 * n + day, db_ms=10))  # fmt: skip
    OperationTiming.objects.bulk_create(timings)
    revision = Entry.history.filter(title="Standup 2").first()
    ParkedRevision.objects.create(revision=revision, entry_id=revision.id,
                                  error="the mirror's disk was full")  # fmt: skip
    # The backlogs' history, kept for the last 20 days: the embedding backlog grew while the
    # provider was down, then drained; the mirror fell behind for a few days.
    open_items = Entry.objects.filter(status="open").count()
    BacklogSnapshot.objects.bulk_create(
        BacklogSnapshot(taken_at=now - timedelta(days=day, hours=1),
                        open_by_project={str(desk["entries"]["Holiday plans"].project_id):
                                         open_items + day // 4},
                        embedding_backlog=max(0, 40 - abs(day - 8) * 6),
                        mirror_pending=3 * max(0, 4 - abs(day - 14)),
                        mirror_lag_seconds=90.0 * max(0, 4 - abs(day - 14)),
                        parked=1 if day < 3 else 0)
        for day in range(20)
    )  # fmt: skip


def test_every_admin_page_in_the_theme_wide_and_on_a_phone_light_and_dark(
    desk,
    page: Page,
    requests,
    csp,
):
    base = desk["url"]
    _a_month_of_work(desk)
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, base)

    # The dashboard: plots of the last 30 days, each bar a link to the list it sums up.
    board = page.locator("#cairn-dashboard")
    writes = board.locator('[data-plot="writes"]')
    expect(writes.locator("svg a")).to_have_count(30)
    expect(writes).to_contain_text("by agents")
    expect(board.locator('[data-plot="searches"] polyline')).to_have_count(2)
    for key in ("open", "waiting", "embedding", "parked", "mirror", "projects", "kinds"):
        expect(board.locator(f'[data-plot="{key}"]')).to_be_visible()
    expect(board.locator('[data-plot="parked"]')).to_contain_text("1 parked now")
    # The backlogs as each day ended, from their snapshots: kept for 20 days, the mirror's lag
    # as a line over its queue.
    mirror = board.locator('[data-plot="mirror"]')
    expect(mirror).to_contain_text("kept since")
    expect(mirror.locator("polyline")).to_have_count(1)
    expect(board.locator('[data-plot="embedding"] svg rect.s0')).not_to_have_count(0)
    shot(page, "admin-dashboard.png")
    board.locator('[data-plot="kinds"] a', has_text="decision").click()
    expect(page).to_have_url(re.compile(r"kind__exact=decision"))
    expect(page.locator("#result_list tbody tr")).to_have_count(5)

    # The sidebar names things as people say them.
    nav = page.locator("#nav-sidebar")
    expect(nav.get_by_role("link", name="API tokens")).to_be_visible()
    expect(nav).not_to_contain_text("Api tokens")

    plan = desk["entries"]["Checkout v2 rollout plan"]
    entry_update(
        actor=desk["actor"],
        ref=plan.pk,
        fields=EntryFields(body="We ship behind the checkout-v2 flag, five percent a day.\n\n"
                           "- depends_on [[Rollout risks]]\n- [owner] Dana"),
        reason="a slower rollout",
    )  # fmt: skip
    pages = {
        "entries": "/admin/knowledge/entry/",
        "entry-filters": "/admin/knowledge/entry/",
        "projects": "/admin/knowledge/project/",
        "project": f"/admin/knowledge/project/{plan.project_id}/change/",
        "subtopics": "/admin/knowledge/subtopic/",
        "history": f"/admin/knowledge/entry/{plan.pk}/history/",
        "diff": f"/admin/knowledge/entry/{plan.pk}/history/diff/?from=1&to=2",
        "diff-unified": f"/admin/knowledge/entry/{plan.pk}/history/diff/?from=1&to=2&mode=unified",
        "tokens": "/admin/knowledge/apitoken/",
        "token-add": "/admin/knowledge/apitoken/add/",
        "people": "/admin/auth/user/",
        "parked": "/admin/history/parkedrevision/",
        "timings": "/admin/ops/operationtiming/",
    }
    for name, url in pages.items():
        page.goto(f"{base}{url}")
        expect(page.locator("#nav-sidebar")).to_be_visible()
        if name == "entry-filters":
            # Below 1536 px the theme's filter panel slides over the list: at 1440 px the tree
            # and the filters sit inside the window, wide enough to read.
            page.click(".filter-open-button")
            tree = page.locator(".cairn-tree")
            expect(tree).to_be_visible()
            expect(tree.get_by_role("link", name="journal")).to_be_in_viewport()
            box = tree.bounding_box()
            assert box["width"] >= 240 and box["x"] + box["width"] <= 1440, box
            expect(page.get_by_text("By status")).to_be_in_viewport()
        shot(page, f"admin-{name}.png")

    page.context.clear_cookies()  # signed out
    page.goto(f"{base}/admin/login/")
    shot(page, "admin-login.png")

    hosts = {urlsplit(url).netloc for url in requests if not url.startswith("data:")}
    assert hosts == {urlsplit(base).netloc}, f"requests left the site: {hosts}"
