"""docs/first-session.md, followed in Chromium on the demo `make run` seeds: an agent writes a
decision (the MCP tools, with the guide's arguments), a person finds it on the home page and
reads it, the agent corrects it, the person compares the versions and reverts in the admin. Its
pictures are the guide's, and the demo's home page is the README's."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from knowledge.actors import Actor
from knowledge.models import Entry
from mcp_api.tools import answer
from tests.factories import UserFactory
from tests.web.browser import PASSWORD, shot, sign_in

BODY = (
    "Repeated searches are answered from memory for two minutes at most.\n\n"
    "- [decision] Keep search answers for two minutes #search\n"
    "- relates_to [[Use PostgreSQL for search]]"
)


@pytest.fixture
def demo(live_server):
    # The superuser `make run` creates, as the README has a newcomer sign in.
    person = UserFactory(username="admin", is_staff=True, is_superuser=True)
    person.set_password(PASSWORD)
    person.save()
    call_command("seed_demo", "--if-empty", stdout=io.StringIO())
    return live_server.url, person


def _ok(result):
    assert not result.is_error, result.content[0].text
    return result


def test_the_first_session_on_the_demo(demo, page: Page, csp):
    base, person = demo
    page.set_viewport_size({"width": 1280, "height": 860})
    sign_in(page, base, "admin")
    expect(page.locator(".card", has_text="Platform")).to_contain_text("entries")
    shot(page, "home.png")  # the README's picture: the demo as `make run` seeds it

    # 2. An agent searches first, finds nothing to update, and writes the decision.
    agent = Actor(user=person, agent="agent:claude-code")
    found = _ok(answer("search", agent, {"query": "search answers cache", "project": "platform"}))
    assert "Keep search answers" not in found.content[0].text
    wrote = _ok(
        answer(
            "upsert",
            agent,
            {
                "project": "platform",
                "subtopic": "decisions",
                "title": "Keep search answers for two minutes",
                "kind": "decision",
                "tags": ["search"],
                "reason": "first session",
                "body": BODY,
            },
        )
    )
    entry = Entry.objects.get(title="Keep search answers for two minutes")
    assert entry.short_id in wrote.content[0].text
    assert "Use PostgreSQL for search' (resolved)" in wrote.content[0].text

    # 3. The person finds it first among the recent changes and reads it.
    page.goto(f"{base}/")
    recent = page.locator("section", has_text="Recent changes")
    recent.locator("a", has_text=entry.title).first.click()
    expect(page).to_have_title(f"{entry.title} · Cairn")
    expect(page.locator("#memory-url")).to_have_text(
        "memory://platform/decisions/keep-search-answers-for-two-minutes"
    )
    expect(page.locator("#observations")).to_contain_text("Keep search answers for two minutes")
    expect(page.locator("#relations a")).to_have_text("Use PostgreSQL for search")
    expect(page.locator("dd", has_text="agent:claude-code").first).to_be_visible()
    shot(page, "first-session-entry.png")

    # 4. The correction: the agent's one find_replace, as the guide shows it.
    _ok(
        answer(
            "edit",
            agent,
            {
                "id": entry.short_id,
                "operation": "find_replace",
                "find": "for two minutes at most.",
                "content": "for two minutes at most, or until a write changes what they read.",
                "reason": "a write retires them",
            },
        )
    )

    # 5. Version 1 against version 2.
    page.reload()
    page.click("button:text('Compare versions')")
    expect(page).to_have_title(f"Changes v1→v2 · {entry.title} · Cairn")
    expect(page.locator(".diff .add", has_text="until a write")).to_be_visible()
    expect(page.locator(".diff .del", has_text="two minutes at most.")).to_be_visible()
    shot(page, "first-session-diff.png")
    diff = _ok(answer("diff", agent, {"id": entry.short_id, "from_version": 1}))
    assert "+Repeated searches" in diff.content[0].text

    # 6. Take it back: the admin's history, revert to version 1 with a reason.
    page.goto(f"{base}/admin/knowledge/entry/{entry.pk}/history/")
    page.locator("#revisions tr", has_text="first session").locator(
        "a:text('revert to this')"
    ).click()
    page.fill("input[name=reason]", "back to the first wording")
    page.click("input[type=submit]")
    expect(page.locator("#main")).to_contain_text("Reverted to version 1")
    entry.refresh_from_db()
    assert entry.version == 3 and entry.body == BODY
    history = _ok(answer("history", agent, {"id": entry.short_id}))
    assert "back to the first wording" in history.content[0].text


def test_the_demo_shows_a_note_types_schema_and_who_does_not_fit(demo, page: Page, csp):
    base, _ = demo
    page.set_viewport_size({"width": 1200, "height": 640})
    sign_in(page, base, "admin")
    tom = Entry.objects.get(title="Tom Becker")
    page.goto(f"{base}/e/{tom.short_id}/")
    expect(page.locator("#schema-fit")).to_contain_text("team is missing")
    shot(page, "entry-schema.png")
    page.goto(f"{base}/p/platform/")
    expect(page.locator('tr[data-kind="person"]')).to_contain_text("1 of 2")
    shot(page, "project-note-types.png")
