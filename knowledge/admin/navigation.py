"""The theme's sidebar: Cairn's pages by what a person does with them, named as people say them
("API tokens", "People"), each shown only to who may open it (settings UNFOLD["SIDEBAR"])."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

SUPERUSER = "superuser"  # the timings are for superusers only (ops/admin.py)

GROUPS = (
    ("Memory", (
        ("Dashboard", "monitoring", "index", None),
        ("Entries", "description", "knowledge_entry_changelist", "knowledge.view_entry"),
        ("Projects", "folder", "knowledge_project_changelist", "knowledge.view_project"),
        ("Subtopics", "account_tree", "knowledge_subtopic_changelist", "knowledge.view_subtopic"),
        ("Sources", "link", "knowledge_source_changelist", "knowledge.view_source"),
    )),
    ("Background work", (
        ("Parked revisions", "inventory_2", "history_parkedrevision_changelist",
         "history.view_parkedrevision"),
        ("Operation timings", "timer", "ops_operationtiming_changelist", SUPERUSER),
    )),
    ("Access", (
        ("API tokens", "key", "knowledge_apitoken_changelist", "knowledge.view_apitoken"),
        ("Connected clients", "cable", "knowledge_oauthgrant_changelist", None),
        ("OAuth clients", "apps", "knowledge_oauthclient_changelist", SUPERUSER),
        ("Agent runs", "history", "knowledge_apitoken_runs", "knowledge.view_apitoken"),
        ("People", "person", "auth_user_changelist", "auth.view_user"),
        ("Groups", "group", "auth_group_changelist", "auth.view_group"),
    )),
)  # fmt: skip


def sidebar(request: HttpRequest) -> list[dict]:
    groups = []
    for title, rows in GROUPS:
        items = []
        for label, icon, name, perm in rows:
            try:
                link = reverse(f"admin:{name}")
            except NoReverseMatch:  # a site without that admin (a test's own site)
                continue
            user = request.user
            allowed = (
                user.is_superuser if perm == SUPERUSER else perm is None or user.has_perm(perm)
            )
            items.append({"title": label, "icon": icon, "link": link,
                          "permission": lambda request, allowed=allowed: allowed})  # fmt: skip
        if items:
            groups.append({"title": title, "separator": True, "items": items})
    return groups
