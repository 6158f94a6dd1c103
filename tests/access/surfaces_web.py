"""Web columns of the leak matrix: the pages for people (web/), their search, history, diff and
small actions, the graph page's data and the entry page's observations, links and backlinks.
People only (the pages take no API token), so token roles are not crossed.

A refused page is the site's 403 or 404 page; where the project's existence is secret it is
exactly the 404 a project or entry that never existed gets, and no refusal shows the entry.
"""

from __future__ import annotations

import re

from knowledge.models import Entry
from tests.access.surfaces import surface
from tests.access.surfaces_graph import LINK_TEXT
from tests.access.surfaces_graph import _link as link_both_ways
from tests.access.surfaces_graph import _silent as graph_silent
from tests.access.world import PERSON_ROLES, SECRET_WORD, SLUG, TITLE, World


def get(world: World, url: str, **headers) -> tuple[int, str]:
    response = world.admin_client.get(url, headers=headers)
    return response.status_code, response.content.decode()


def silent(world: World, status: int, html: str, missing_url: str | None = None) -> None:
    """A refusal: 403 only where the project's existence is known, else the same 404 as for
    something that does not exist; the entry's text never shows."""
    assert status in (403, 404), f"unexpected status {status}"
    assert TITLE not in html and "budget is" not in html, "a refused page leaks the entry"
    if not world.existence_known:
        assert status == 404, "a hidden project answered 403: it admits that it exists"
        if missing_url is not None:
            never_status, never = get(world, missing_url)
            assert never_status == 404
            assert strip(html) == strip(never), "a hidden target answers unlike a missing one"


def strip(html: str) -> str:
    """The page without what differs anyway: the asked slug and the masked CSRF token."""
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)
    return html.replace(SLUG, "X").replace("nosuchproj", "X")


def shown(world: World, url: str, needle: str, missing_url: str | None = None) -> bool:
    status, html = get(world, url)
    if status == 200 and needle in html:
        return True
    silent(world, status, html, missing_url)
    return False


@surface("web_home", "read", PERSON_ROLES)
def _home(world: World) -> bool:
    status, html = get(world, "/")
    assert status == 200
    # The project card and its entries in "recent" come together or not at all.
    assert (f'href="/p/{SLUG}/"' in html) == (TITLE in html), "home shows half a project"
    return TITLE in html


@surface("web_project_page", "read", PERSON_ROLES)
def _project(world: World) -> bool:
    return shown(world, f"/p/{SLUG}/", "Vault Project", missing_url="/p/nosuchproj/")


@surface("web_subtopic_page", "read", PERSON_ROLES)
def _subtopic(world: World) -> bool:
    return shown(world, f"/p/{SLUG}/t/ops/2026/", TITLE, missing_url="/p/nosuchproj/t/ops/2026/")


@surface("web_entry_page", "read", PERSON_ROLES)
def _entry(world: World) -> bool:
    return shown(world, f"/e/{world.entry.short_id}/", "budget is 43")


@surface("web_entry_page_by_id", "read", PERSON_ROLES)
def _entry_by_id(world: World) -> bool:
    return shown(world, f"/e/{world.entry.pk}/", "budget is 43")


@surface("web_entry_history", "read", PERSON_ROLES)
def _history(world: World) -> bool:
    # The entry page's history lists both revisions, with who and why.
    status, html = get(world, f"/e/{world.entry.short_id}/")
    if status != 200:
        silent(world, status, html)
        return False
    return html.count('name="from"') == 2


@surface("web_diff", "read", PERSON_ROLES)
def _diff(world: World) -> bool:
    return shown(world, f"/e/{world.entry.short_id}/diff/?from=1&to=2", "budget is 42")


@surface("web_search", "read", PERSON_ROLES)
def _search(world: World) -> bool:
    status, html = get(world, "/search/?q=zebracorn&history=on")
    assert status == 200
    found = TITLE in html
    assert ("1 result " in html) == found, "the result count counts what the page hides"
    if not found:
        assert "budget is" not in html
    return found


@surface("web_search_as_you_type", "read", PERSON_ROLES)
def _search_fragment(world: World) -> bool:
    status, html = get(world, "/search/?q=budget", **{"HX-Request": "true"})
    assert status == 200 and "<html" not in html
    return TITLE in html


@surface("web_search_project_filter", "read", PERSON_ROLES)
def _search_filter(world: World) -> bool:
    status, html = get(world, f"/search/?q=budget&project={SLUG}")
    assert status == 200
    if TITLE in html:
        return True
    assert "budget is" not in html
    if not world.existence_known:
        _, never = get(world, "/search/?q=budget&project=nosuchproj")
        assert strip(html) == strip(never), "a hidden project's filter answers unlike a missing one"
    return False


@surface("web_search_filter_choices", "read", PERSON_ROLES)
def _search_choices(world: World) -> bool:
    status, html = get(world, "/search/")
    assert status == 200
    return f'<option value="{SLUG}"' in html


@surface("web_verify", "write", PERSON_ROLES)
def _verify(world: World) -> bool:
    response = world.admin_client.post(f"/e/{world.entry.short_id}/verify/", {"version": 2})
    done = Entry.objects.get(pk=world.entry.pk).verified_at is not None
    if not done:
        silent(world, response.status_code, response.content.decode())
    return done


@surface("web_set_status", "write", PERSON_ROLES)
def _set_status(world: World) -> bool:
    url = f"/e/{world.entry.short_id}/status/"
    response = world.admin_client.post(url, {"status": "open", "version": 2})
    done = Entry.objects.get(pk=world.entry.pk).status == "open"
    if not done:
        silent(world, response.status_code, response.content.decode())
    return done


# --- the graph on the pages: a reader who may not see the target gets the link text only ------


def _json(world: World, url: str, params: dict) -> tuple[int, str, dict]:
    response = world.admin_client.get(url, params)
    return response.status_code, response.content.decode(), response.json()


@surface("web_graph_data_around", "read", PERSON_ROLES)
def _graph_data_around(world: World) -> bool:
    link_both_ways(world)
    params = {"around": world.commons_entry.short_id, "depth": 2}
    status, text, data = _json(world, "/graph/data.json", params)
    assert status == 200, text
    saw = any(n["id"] == world.entry.pk for n in data["nodes"])
    assert saw == any(world.entry.pk in (e["source"], e["target"]) for e in data["edges"])
    return graph_silent(world, text, saw)


@surface("web_graph_data_all", "read", PERSON_ROLES)
def _graph_data_all(world: World) -> bool:
    link_both_ways(world)
    status, text, data = _json(world, "/graph/data.json", {})
    assert status == 200, text
    return graph_silent(world, text, any(n["id"] == world.entry.pk for n in data["nodes"]))


@surface("web_graph_data_project", "read", PERSON_ROLES)
def _graph_data_project(world: World) -> bool:
    link_both_ways(world)
    response = world.admin_client.get("/graph/data.json", {"project": SLUG})
    text = response.content.decode()
    if response.status_code == 200:
        return graph_silent(world, text, world.entry.short_id in text)
    assert response.status_code in (403, 404), text
    graph_silent(world, text, False)
    if not world.existence_known:
        assert response.status_code == 404, "a hidden project answered 403"
        never = world.admin_client.get("/graph/data.json", {"project": "nosuchproj"})
        assert strip(text) == strip(never.content.decode()), "hidden answers unlike missing"
    return False


@surface("web_entry_page_relations", "read", PERSON_ROLES)
def _entry_relations(world: World) -> bool:
    """The public entry's page: its link to the target, and the target's link back to it."""
    link_both_ways(world)
    status, html = get(world, f"/e/{world.commons_entry.short_id}/")
    assert status == 200
    relations = html[
        html.index('id="relations"') : html.index("</section>", html.index('id="relations"'))
    ]
    saw = f'href="/e/{world.entry.short_id}/"' in relations
    if not saw:
        assert '<span class="waiting"' in relations and LINK_TEXT in relations, relations
    backlink = 'id="backlinks"' in html and f'href="/e/{world.entry.short_id}/"' in html
    assert backlink == saw, "a link shows one way and not the other"
    return graph_silent(world, html, saw)


@surface("web_entry_page_observations", "read", PERSON_ROLES)
def _entry_observations(world: World) -> bool:
    link_both_ways(world)
    return shown(world, f"/e/{world.entry.short_id}/", f"The {SECRET_WORD} costs 43")
