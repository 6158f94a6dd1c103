"""Entries as MCP resources and the memory prompts, over the real MCP client: resources/list
pages through the memory:// addresses the caller can see (and none it cannot), the template
names the address form, resources/read returns the entry, and the prompts carry what the
services found."""

import anyio
import mcp_types
import pytest
from mcp.shared.exceptions import MCPError

from knowledge.models import Entry
from mcp_api import resources
from tests.factories import ProjectFactory
from tests.mcp_api.conftest import mcp_session

pytestmark = pytest.mark.usefixtures("acme")


def _session(mcp_url, token, work):
    async def go():
        async with mcp_session(mcp_url, token) as session:
            return await work(session)

    return anyio.run(go)


def test_resources_list_pages_through_the_visible_entries(call, mcp_url, token, monkeypatch):
    monkeypatch.setattr(resources, "PAGE", 2)
    for n in range(3):
        res = call("upsert", project="acme", subtopic="a", title=f"Note {n}", body="x")
        assert not res.is_error
    hidden = ProjectFactory(slug="secret", sensitivity="restricted")
    Entry.objects.create(project=hidden, title="Hidden", slug="hidden", body="no")

    async def pages(session):
        first = await session.list_resources()
        second = await session.list_resources(
            params=mcp_types.PaginatedRequestParams(cursor=first.next_cursor)
        )
        return first, second

    first, second = _session(mcp_url, token, pages)
    uris = [str(r.uri) for r in first.resources + second.resources]
    assert uris == [f"memory://acme/a/note-{n}" for n in range(3)]
    assert first.next_cursor and second.next_cursor is None
    assert first.resources[0].title == "Note 0"


def test_a_template_and_a_read_give_the_entry(call, mcp_url, token):
    call("upsert", project="acme", subtopic="ops", title="Runbook", body="Restart the cache.")

    async def work(session):
        templates = await session.list_resource_templates()
        read = await session.read_resource("memory://acme/ops/runbook")
        return templates, read

    templates, read = _session(mcp_url, token, work)
    assert templates.resource_templates[0].uri_template.startswith("memory://")
    [content] = read.contents
    assert content.mime_type == "text/markdown"
    assert content.text.startswith("# Runbook")
    assert content.text.endswith("Restart the cache.")


def test_reading_an_unknown_address_is_an_error_that_says_so(mcp_url, token):
    async def work(session):
        try:
            await session.read_resource("memory://acme/nothing-here")
        except MCPError as exc:
            return exc
        return None

    error = _session(mcp_url, token, work)
    assert error is not None and "No entry 'memory://acme/nothing-here'" in str(error)


def test_the_prompts_recall_record_and_summarise(call, mcp_url, token):
    call("upsert", project="acme", title="Cache decision", body="- [decision] Roll back the cache")

    async def work(session):
        listed = await session.list_prompts()
        recall = await session.get_prompt("recall", {"topic": "cache decision"})
        record = await session.get_prompt("record_session", {"project": "acme"})
        week = await session.get_prompt("changes_this_week", {"project": "acme"})
        return listed, recall, record, week

    listed, recall, record, week = _session(mcp_url, token, work)
    assert {p.name for p in listed.prompts} == {"recall", "record_session", "changes_this_week"}
    assert "Roll back the cache" in recall.messages[0].content.text
    assert 'upsert(project="acme", subtopic="sessions/' in record.messages[0].content.text
    assert "Cache decision" in week.messages[0].content.text
