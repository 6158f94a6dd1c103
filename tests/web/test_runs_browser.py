"""Runs in headless Chromium: an administrator opens the runs page, finds the agent's run among
the demo's, opens it, previews its undo (nothing changes), undoes it with its one conflict left as
the person wrote it, and undoes the undo; every page keeps to the
Content-Security-Policy."""

from __future__ import annotations

import re

from django.core.management import call_command
from playwright.sync_api import Page, expect

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_update, entry_upsert, token_create
from tests.factories import UserFactory
from tests.web.browser import PASSWORD, shot, sign_in


def test_an_admin_previews_and_undoes_an_agents_run_in_the_browser(
    live_server, page: Page, requests, csp
):
    with open("/dev/null", "w") as quiet:
        call_command("seed_demo", "--if-empty", stdout=quiet)
    admin = UserFactory(username="dana", is_staff=True, is_superuser=True)
    admin.set_password(PASSWORD)
    admin.save()
    demo = Entry.objects.get(title="Account overview").created_by
    token = token_create(actor=Actor.system(), user=demo, name="laptop", agent_label="agent:codex")
    agent = Actor(user=demo, agent="agent:codex", token_id=token.token.pk)
    made = entry_upsert(actor=agent, project="platform", subtopic="notes", fields=EntryFields(
        title="Agent guess", body="The cache is Redis.\n")).entry  # fmt: skip
    convention = Entry.objects.get(title="Team conventions")
    entry_update(actor=agent, ref=convention.pk, fields=EntryFields(
        body=convention.body.replace("one working day", "two hours")))  # fmt: skip
    person = Actor.for_user(demo)
    entry_update(actor=person, ref=convention.pk, fields=EntryFields(
        body=convention.body.replace("one working day", "four hours")))  # fmt: skip
    base = live_server.url

    sign_in(page, base)
    page.click("nav >> text=Runs")
    expect(page).to_have_url(f"{base}/runs/")
    rows = page.locator("#runs tbody tr")
    expect(rows).to_have_count(2)  # the demo's agent run and this one
    expect(rows.first).to_contain_text("agent:codex")
    expect(rows.nth(1)).to_contain_text("agent:claude-code")
    expect(rows.nth(1)).to_contain_text("demo agent (cairn_")
    shot(page, "runs.png")
    rows.first.locator("a").first.click()
    expect(page.locator("h1")).to_contain_text(re.compile(r"Run r\d+"))
    expect(page.locator(f"#entry-{made.short_id} .diff")).to_contain_text("+The cache is Redis.")
    expect(page.locator(f"#entry-{convention.short_id} .later")).to_contain_text("demo")

    page.click("#preview-undo")
    expect(page.locator("#undo-summary")).to_contain_text("delete 1")
    expect(page.locator("#undo-summary")).to_contain_text("1 conflict")
    expect(page.locator(f"#undo-{convention.short_id}")).to_contain_text("touch the same body")
    assert Entry.objects.filter(pk=made.pk).exists()  # the preview changed nothing
    shot(page, "run-undo.png")
    page.fill("#reason", "the agent guessed")
    page.click("#undo")
    expect(page.locator(".messages")).to_contain_text("undone: 0 set back, 1 deleted")
    expect(page.locator(".messages")).to_contain_text(convention.short_id)
    expect(page.locator("h1")).to_contain_text("an undo")
    assert not Entry.objects.filter(pk=made.pk).exists()
    assert "four hours" in Entry.objects.get(pk=convention.pk).body

    page.click("#preview-undo")  # the undo is a run too: undo it
    page.fill("#reason", "it was right")
    page.click("#undo")
    expect(page.locator(".messages")).to_contain_text("1 brought back")
    assert Entry.objects.get(pk=made.pk).short_id == made.short_id
    assert not [url for url in requests if not url.startswith(base)]
