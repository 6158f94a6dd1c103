"""Web columns of the leak matrix: the pages for people (web/), their search, history, diff and
small actions. People only (the pages take no API token), so token roles are not crossed.

A refused page is the site's 403 or 404 page; where the project's existence is secret it is
exactly the 404 a project or entry that never existed gets, and no refusal shows the entry.
"""

from __future__ import annotations

import re

from knowledge.models import Entry
from tests.access.surfaces import surface
from tests.access.world import PERSON_ROLES, SLUG, TITLE, World


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
