"""The timings table in the admin: the same p50 / p90 / max and size buckets as
`manage.py metrics`, above the raw rows (read-only: rows are written by the recorder)."""

from django.contrib import admin
from unfold.admin import ModelAdmin

from ops import report, timing
from ops.models import OperationTiming


@admin.register(OperationTiming)
class OperationTimingAdmin(ModelAdmin):
    list_display = ("at", "surface", "operation", "outcome", "total_ms", "db_ms", "entries")
    list_filter = ("surface", "outcome", "operation")
    date_hierarchy = "at"
    ordering = ("-at",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def changelist_view(self, request, extra_context=None):
        timing.flush()
        try:
            days = min(max(float(request.GET.get("days", 7)), 0.01), 3650)
        except ValueError:
            days = 7.0
        labels, by_size = report.by_size(days=days)
        rows = [
            {"operation": row["operation"], "cells": [row.get(label) for label in labels]}
            for row in by_size
        ]
        context = {
            "timing_days": days,
            "timing_ops": report.per_operation(days=days),
            "timing_labels": labels,
            "timing_sizes": rows,
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=context)

    def get_changelist(self, request, **kwargs):
        # `days` belongs to the summary above the list, not to the list's filters.
        request.GET = request.GET.copy()
        request.GET.pop("days", None)
        return super().get_changelist(request, **kwargs)
