"""The admin end to end in headless Chromium (Playwright, the system browser as in
test_browser.py): a staff member signs in, searches the entry list with a paraphrase, filters it
by the subtopic tree, moves two entries with a reason, edits with the live preview showing a
resolved and a missing link, hits a conflict and keeps the text, and reverts to a version.
Every page keeps to the Content-Security-Policy. Screenshots go to docs/screenshots/ with
CAIRN_UPDATE_SCREENSHOTS=1 (else var/screenshots/)."""

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
from tests.web.test_browser import PASSWORD, csp, requests, shot  # noqa: F401 (fixtures)


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


def sign_in(page: Page, base: str) -> None:
    page.goto(f"{base}/admin/")
    page.fill("#id_username", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    expect(page).to_have_url(f"{base}/admin/")


def test_a_staff_member_searches_filters_moves_edits_and_reverts(
    desk,
    page: Page,
    requests,  # noqa: F811 (the fixture imported above)
    csp,  # noqa: F811
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
    expect(page.locator("h1")).to_have_text("Move entries to a subtopic")
    page.fill("#id_subtopic", "Support > Drafts")
    page.fill("#id_reason", "drafts belong with support")
    shot(page, "admin-bulk-move.png")
    page.click("#cairn-bulk-form input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text(
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
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert "[[Launch retro]]" in Entry.objects.get(pk=plan.pk).body

    # Revert to version 2 from the history page.
    page.goto(f"{base}/admin/knowledge/entry/{plan.pk}/history/")
    page.locator("#revisions tr", has_text="slower").locator("a:text('revert to this')").click()
    page.fill("input[name=reason]", "back to five percent")
    shot(page, "admin-revert.png")
    page.click("input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("Reverted to version 2")
    reverted = Entry.objects.get(pk=plan.pk)
    assert reverted.version == 4 and "five percent" in reverted.body

    hosts = {urlsplit(url).netloc for url in requests if not url.startswith("data:")}
    assert hosts == {urlsplit(base).netloc}, f"requests left the site: {hosts}"


def test_a_schema_shows_its_fields_the_editor_its_fit_and_strict_refuses_on_the_form(
    desk,
    page: Page,
    csp,  # noqa: F811 (the fixture imported above)
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
    fields = page.locator(".field-schema_fields #cairn-schema-fields")
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

    page.locator(".CodeMirror").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n- [team] Platform\n")
    expect(fit).to_contain_text("fits")
    page.keyboard.press("Control+s")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert Entry.objects.get(pk=tom.pk).version == 2

    # The pages: the entry fits in one line; the project counts its person entries.
    page.goto(f"{base}/e/{tom.short_id}/")
    expect(page.locator("#schema-fit")).to_contain_text("Fits the person schema")
    page.goto(f"{base}/p/launch/")
    expect(page.locator('#note-types tr[data-kind="person"]')).to_contain_text("all 1")
