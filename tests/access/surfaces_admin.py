"""Admin columns of the leak matrix: changelists, change pages, history, filters, saves.

Only people use the admin, so token roles are not crossed with these columns. Every person in
the world is staff with the knowledge model permissions: what differs is project access only.
"""

from __future__ import annotations

from knowledge.models import Entry, Project
from tests.access.surfaces import surface
from tests.access.world import PERSON_ROLES, SECRET_WORD, SLUG, TITLE, World

A = "/admin/knowledge"


def page(world: World, url: str) -> tuple[int, str]:
    response = world.admin_client.get(url)
    return response.status_code, response.content.decode()


def shown(world: World, url: str, needle: str) -> bool:
    """Whether the page shows `needle`; a page that hides it must say nothing about it."""
    status, html = page(world, url)
    found = status == 200 and needle in html
    if not found:
        assert SECRET_WORD not in html.lower(), f"{url} leaks the entry"
    return found


@surface("admin_project_changelist", "read", PERSON_ROLES)
def _project_changelist(world: World) -> bool:
    return shown(world, f"{A}/project/", SLUG)


@surface("admin_project_change_page", "read", PERSON_ROLES)
def _project_change(world: World) -> bool:
    return shown(world, f"{A}/project/{world.target.pk}/change/", "Vault Project")


@surface("admin_project_history", "read", PERSON_ROLES)
def _project_history(world: World) -> bool:
    return shown(world, f"{A}/project/{world.target.pk}/history/", f"history: {SLUG}")


@surface("admin_entry_changelist", "read", PERSON_ROLES)
def _entry_changelist(world: World) -> bool:
    return shown(world, f"{A}/entry/", TITLE)


@surface("admin_entry_search", "read", PERSON_ROLES)
def _entry_search(world: World) -> bool:
    status, html = page(world, f"{A}/entry/?q={SECRET_WORD}")
    # The result count ("1 result (N total)") must count only what the user may see.
    return status == 200 and TITLE in html and "1 result" in html


@surface("admin_entry_change_page", "read", PERSON_ROLES)
def _entry_change(world: World) -> bool:
    return shown(world, f"{A}/entry/{world.entry.pk}/change/", "budget is 43")


@surface("admin_entry_history", "read", PERSON_ROLES)
def _entry_history(world: World) -> bool:
    return shown(world, f"{A}/entry/{world.entry.pk}/history/", TITLE)


@surface("admin_entry_old_revision", "read", PERSON_ROLES)
def _entry_old_revision(world: World) -> bool:
    first = world.entry.history.order_by("history_id").first()
    url = f"{A}/entry/{world.entry.pk}/history/{first.history_id}/"
    return shown(world, url, "budget is 42")


@surface("admin_subtopic_changelist", "read", PERSON_ROLES)
def _subtopic_changelist(world: World) -> bool:
    return shown(world, f"{A}/subtopic/", "ops/2026")


@surface("admin_source_changelist", "read", PERSON_ROLES)
def _source_changelist(world: World) -> bool:
    return shown(world, f"{A}/source/", "msg-vault-42")


@surface("admin_entry_project_filter_choices", "read", PERSON_ROLES)
def _entry_filter(world: World) -> bool:
    # The commons entry keeps the changelist non-empty, so the filter renders for everyone.
    status, html = page(world, f"{A}/entry/?project__id__exact={world.commons.pk}")
    assert status == 200
    return f"project__id__exact={world.target.pk}" in html


@surface("admin_entry_save", "write", PERSON_ROLES)
def _entry_save(world: World) -> bool:
    entry = world.entry
    data = {
        "project": entry.project_id,
        "subtopic_path": "ops/2026",
        "title": entry.title,
        "body": "saved in the admin",
        "reason": "test",
        "kind": entry.kind,
        "tags_text": "",
        "status": entry.status,
        "searchable": "on",
        "metadata": "{}",
        "version": entry.version,
    }
    world.admin_client.post(f"{A}/entry/{entry.pk}/change/", data)
    ok = Entry.objects.get(pk=entry.pk).body == "saved in the admin"
    if not ok:
        assert Entry.objects.get(pk=entry.pk).version == entry.version
    return ok


@surface("admin_entry_delete", "write", PERSON_ROLES)
def _entry_delete(world: World) -> bool:
    world.admin_client.post(f"{A}/entry/{world.entry.pk}/delete/", {"post": "yes"})
    return not Entry.objects.filter(pk=world.entry.pk).exists()


@surface("admin_project_save", "maintain", PERSON_ROLES)
def _project_save(world: World) -> bool:
    data = {
        "name": "Vault Project",
        "description": "changed in the admin",
        "sensitivity": world.sensitivity,
        # the members inline's management form (no member changes)
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
    }
    world.admin_client.post(f"{A}/project/{world.target.pk}/change/", data)
    return Project.objects.get(pk=world.target.pk).description == "changed in the admin"


@surface("admin_autocomplete_project", "read", PERSON_ROLES)
def _autocomplete(world: World) -> bool:
    url = "/admin/autocomplete/?app_label=knowledge&model_name=entry&field_name=project&term=vault"
    response = world.admin_client.get(url)
    if response.status_code != 200:
        return False
    return [r["text"] for r in response.json()["results"]] == [SLUG]


@surface("admin_entry_tree", "read", PERSON_ROLES)
def _entry_tree(world: World) -> bool:
    status, html = page(world, f"{A}/entry/")
    assert status == 200
    return f'data-key="{SLUG}/ops/2026"' in html


@surface("admin_entry_tree_filter", "read", PERSON_ROLES)
def _entry_tree_filter(world: World) -> bool:
    return shown(world, f"{A}/entry/?tree={SLUG}%2Fops", TITLE)


@surface("admin_entry_live_preview_link", "read", PERSON_ROLES)
def _live_preview(world: World) -> bool:
    response = world.admin_client.post(
        f"{A}/entry/preview/live/",
        {"text": f"[[{TITLE}]]", "project": str(world.target.pk), "title": "x"},
    )
    html = response.content.decode()
    resolved = 'class="resolved"' in html
    if not resolved:
        assert f"/entry/{world.entry.pk}/" not in html, "the preview links a hidden entry"
    return resolved


@surface("admin_entry_bulk_status", "write", PERSON_ROLES)
def _bulk_status(world: World) -> bool:
    entry = world.entry
    world.admin_client.post(
        f"{A}/entry/",
        {"action": "set_entries_status", "_selected_action": [entry.pk], "apply": "1",
         f"version_{entry.pk}": entry.version, "status": "archived", "reason": "test"},
    )  # fmt: skip
    return Entry.objects.get(pk=entry.pk).status == "archived"


@surface("admin_subtopic_move", "write", PERSON_ROLES)
def _subtopic_move(world: World) -> bool:
    world.admin_client.post(
        f"{A}/subtopic/move/",
        {"project": world.target.pk, "path": "ops/2026", "to": "ops/2027", "reason": "test"},
    )
    return Entry.objects.get(pk=world.entry.pk).subtopic.path == "ops/2027"
