"""The git mirror's parked revisions in the admin (registered in history/admin/__init__.py)."""

from __future__ import annotations

from django.contrib import admin
from unfold.admin import ModelAdmin

from history import mirror
from knowledge.services.background import queue_drain


class ParkedRevisionAdmin(ModelAdmin):
    """Revisions the git mirror set aside, with their error; the action puts them back in line."""

    list_display = ("revision_id", "entry_id", "error", "attempts", "parked_at", "last_tried_at")
    readonly_fields = list_display
    actions = ["retry_selected"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Retry: commit them again (in order) on the next drain")
    def retry_selected(self, request, queryset):
        count = mirror.retry(queryset.values_list("revision_id", flat=True))
        queue_drain()
        self.message_user(
            request,
            f"Put {count} revision(s) back in line; the mirror's next drain commits them. "
            "A revision that still fails is parked again with its new error.",
        )
