"""The entry changelist's search box is Cairn's search: hybrid, ranked, snippets in a column,
the sidebar's filters passed along as search filters. An exact short id opens that entry's row
the stock way (a short id is not words to rank)."""

from __future__ import annotations

import re

from django.contrib import admin, messages
from django.contrib.admin.views.main import ORDER_VAR
from django.db.models import Case, IntegerField, TextField, Value, When
from django.utils.html import escape
from django.utils.safestring import mark_safe

from knowledge.errors import KnowledgeError
from knowledge.search import SearchFilters, search_entries

SEARCH_LIMIT = 100  # the search's own maximum: the changelist shows the best hundred
_SHORT_ID = re.compile(r"[23456789abcdefghjkmnpqrstuvwxyz]{8}")
_HIGHLIGHT = re.compile(r"\*\*(.+?)\*\*")


def search_filters(params) -> SearchFilters:
    """The changelist's sidebar filters that search understands, as SearchFilters; the rest
    (verified, searchable, dates) narrow the ranked rows afterwards, as on any changelist."""
    project, _, path = (params.get("tree") or "").partition("/")
    return SearchFilters.parse(
        project=params.get("project__id__exact") or project or None,
        subtopic=path or None,
        kinds=params.get("kind__exact"),
        status=params.get("status__exact"),
        include_history=True,  # the changelist lists superseded entries and transcripts too
        include_transcripts=True,
    )


class CairnSearchMixin:
    """For EntryAdmin. The ranking and snippets ride on the queryset as annotations, so the
    model admin (shared by every request) keeps no per-request state."""

    search_help_text = (
        "Cairn's search: words or a paraphrase, ranked, with a snippet. An 8-character short "
        "id finds that entry exactly."
    )

    def _ranked_search(self, request) -> bool:
        term = (request.GET.get("q") or "").strip()
        return bool(term) and not _SHORT_ID.fullmatch(term.lower())

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        if self._ranked_search(request):
            return (shown[0], "snippet", *shown[1:])
        return shown

    def get_search_results(self, request, queryset, search_term):
        term = " ".join((search_term or "").split())
        if not term:
            return queryset, False
        if _SHORT_ID.fullmatch(term.lower()):
            exact = queryset.filter(short_id=term.lower())
            if exact.exists():
                return exact, False
        try:
            hits = search_entries(
                request.actor,
                term,
                filters=search_filters(request.GET),
                limit=SEARCH_LIMIT,
            )
        except KnowledgeError as exc:  # a query too long, a filter search cannot read
            messages.error(request, exc.message)
            return queryset.none(), False
        if not hits:
            return queryset.none(), False
        rank = Case(
            *(When(pk=hit.id, then=Value(i)) for i, hit in enumerate(hits)),
            output_field=IntegerField(),
        )
        snippet = Case(
            *(When(pk=hit.id, then=Value(hit.snippet)) for hit in hits),
            default=Value(""),
            output_field=TextField(),
        )
        found = queryset.filter(pk__in=[hit.id for hit in hits])
        found = found.annotate(cairn_rank=rank, cairn_snippet=snippet)
        if ORDER_VAR not in request.GET:  # best first, unless the person sorted by a column
            found = found.order_by("cairn_rank")
        return found, False

    @admin.display(description="snippet")
    def snippet(self, obj) -> str:
        text = escape(getattr(obj, "cairn_snippet", "") or "")
        return mark_safe(
            f'<span class="cairn-snippet">{_HIGHLIGHT.sub(r"<mark>\1</mark>", text)}</span>'
        )
