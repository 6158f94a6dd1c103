"""The git mirror's part of the admin's index: parked revisions and the queue's backlog.

The knowledge admin draws the index and knows nothing of the mirror; history hands it this part
through the index's context (`cairn`, which the knowledge dashboard merges into its own)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from history import selectors


def add_mirror_state(site: admin.AdminSite) -> None:
    index = site.index

    def index_with_mirror(request: HttpRequest, extra_context=None):
        extra = extra_context or {}
        cairn = {"mirror": selectors.mirror_state(), **extra.get("cairn", {})}
        return index(request, {**extra, "cairn": cairn})

    site.index = index_with_mirror
