"""Pages for people: actor from the request → selector or service → template.

Reads go through knowledge.selectors (and history.selectors, search), so a page shows exactly
what the person's role allows; the two small actions (verify, set status) call the services.
Everything else is edited in the admin, which every page links to.
"""

from __future__ import annotations

import functools
import hashlib

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponseNotModified, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from history import selectors as history
from knowledge import selectors
from knowledge.errors import Forbidden, KnowledgeError, NotFound, ValidationFailed
from knowledge.graph.selectors import MAX_DEPTH, graph_data
from knowledge.inputs import find_nul
from knowledge.models import EntryStatus
from knowledge.reads import pages
from knowledge.search import (
    EXPLAIN_TOP,
    SearchFilters,
    explain_parts,
    no_words_note,
    search_entries,
)
from knowledge.selectors import entry_revision
from knowledge.selectors.deleted import may_undelete
from knowledge.services import entry_set_status, entry_undelete, entry_verify

LOGIN_URL = "/accounts/login/"
SEARCH_LIMIT = 50
MAX_QUERY = 500


def person(view=None, *, as_json: bool = False):
    """Signed-in people only (others go to the sign-in page); the core's refusals become this
    site's pages with the core's message: 404 (not found), 403 (not allowed), 400 (anything the
    rules refuse: a subtopic path with no letters, a reference over its length limit, a NUL
    byte). `as_json`: the refusal is `{"error": message}` instead, for the page's scripts."""
    if view is None:
        return functools.partial(person, as_json=as_json)

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), LOGIN_URL)
        try:
            refuse_nul(request, kwargs)
            response = view(request, *args, **kwargs)
        except KnowledgeError as exc:
            response = refusal(request, exc, as_json=as_json)
        # Pages are per person and change with every write: revalidate, never share.
        patch_cache_control(response, private=True, no_cache=True)
        return response

    return wrapper


REFUSAL_PAGES = {NotFound: ("404.html", 404), Forbidden: ("403.html", 403)}


def refusal(request, exc: KnowledgeError, *, as_json: bool):
    template, status = next(
        (page for kind, page in REFUSAL_PAGES.items() if isinstance(exc, kind)),
        ("400.html", 400),
    )
    if as_json:
        return JsonResponse({"error": exc.message}, status=status)
    page = {"message": exc.message}
    if gone := exc.data.get("deleted"):  # the deleted-entry page: its last text, and for an
        # editor of its project a button that brings it back
        page |= {"deleted": gone, "may_undelete": may_undelete(request.actor, gone)}
    return render(request, template, page, status=status)


def refuse_nul(request, kwargs: dict) -> None:
    """PostgreSQL cannot hold a NUL byte, so one anywhere in the address or the form is refused
    here, by name, before any query (as the REST and MCP surfaces refuse theirs)."""
    for where, values in (("address", kwargs), ("query", request.GET), ("form", request.POST)):
        items = values.lists() if hasattr(values, "lists") else values.items()
        if (field := find_nul(dict(items))) is not None:
            raise ValidationFailed(
                f"The {where}'s {field.split('.')[0]!r} contains a NUL byte (\\x00), which "
                "no name or reference holds. Remove it and try again.",
                field=field,
            )


def not_modified(request, *parts) -> tuple[str, HttpResponseNotModified | None]:
    """A weak ETag over what a page shows (and who sees it): 304 when the browser has it."""
    # The page's forms carry the CSRF token: a new token is a new page.
    get_token(request)  # makes sure the request has its CSRF secret
    key = "|".join(str(p) for p in (*parts, request.user.pk, request.META.get("CSRF_COOKIE")))
    etag = f'W/"{hashlib.sha256(key.encode()).hexdigest()[:32]}"'
    if etag in request.headers.get("If-None-Match", ""):
        return etag, HttpResponseNotModified(headers={"ETag": etag})
    return etag, None


@require_GET
@person
def home(request):
    return render(request, "web/home.html", pages.home_page(request.actor))


@require_GET
@person
def project(request, slug: str, path: str = ""):
    page = pages.project_page(
        request.actor,
        project=slug,
        subtopic=path or None,
        kind=(request.GET.get("kind") or "")[:60] or None,
        misfits=request.GET.get("fit") == "no",
    )
    return render(request, "web/project.html", page)


@require_GET
@person
def entry(request, ref: str):
    actor = request.actor
    page = pages.entry_page(actor, ref)
    item = page["entry"]
    revisions = history.entry_history(actor, item, limit=100)
    latest = revisions[0] if revisions else {}
    storage = messages.get_messages(request)
    fit = page["schema_fit"]
    etag, cached = not_modified(
        request,
        item.pk,
        item.version,
        item.updated_at.isoformat(),
        item.verified_at,
        latest.get("revision"),
        latest.get("git_commit"),
        page["can_write"],
        # what links to it and what it links to change without this entry changing
        [(r["type"], r["target_text"], r["entry"]) for r in page["outgoing"]],
        [(r["type"], r["entry"]) for r in page["backlinks"]],
        # the type's schema changes without this entry changing
        fit and (fit.schema.entry, fit.schema.version),
        # a linked entry moves in or out of sight (or is renamed) without this one changing
        [(e.pk, e.title) if e else None for e in (page["supersedes"], page["superseded_by"])],
    )
    if cached is not None and not len(storage):
        return cached
    page |= {
        "revisions": revisions,
        "statuses": EntryStatus.choices,
        "memory_url": f"memory://{item.path}/{item.slug}",
        "admin_url": reverse("admin:knowledge_entry_change", args=[item.pk]),
    }
    response = render(request, "web/entry.html", page)
    response["ETag"] = etag
    return response


def _version(value: str | None, default: int) -> int:
    try:
        number = int(value) if value not in (None, "") else default
    except ValueError as exc:
        raise NotFound(f"{value!r} is not a version number.") from exc
    return max(1, min(number, 2**31))


def _expected_version(request) -> int | None:
    """The version the page showed; the service locks the entry and compares (no check when a
    form sends none)."""
    value = request.POST.get("version")
    return None if value in (None, "") else _version(value, 1)


@require_GET
@person
def diff(request, ref: str):
    actor = request.actor
    item = selectors.entry_get(actor, ref)
    new = _version(request.GET.get("to"), item.version)
    old = _version(request.GET.get("from"), max(new - 1, 1))
    etag, cached = not_modified(request, "diff", item.pk, old, new)
    if cached is not None:
        return cached
    old_text = history.revision_text(entry_revision(actor, item, old), actor)
    new_text = history.revision_text(entry_revision(actor, item, new), actor)
    text = history.unified_diff(
        old_text, new_text, old_label=f"version {old}", new_label=f"version {new}"
    )
    lines = [{"text": line, "kind": _line_kind(line)} for line in text.splitlines()]
    response = render(
        request,
        "web/diff.html",
        {
            "entry": item,
            "old": old,
            "new": new,
            "lines": lines,
            "versions": range(item.version, 0, -1),
        },
    )
    response["ETag"] = etag
    return response


def _line_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


@require_POST
@person
def verify(request, ref: str):
    actor = request.actor
    try:
        done = entry_verify(
            actor=actor,
            ref=ref,
            expected_version=_expected_version(request),
            reason="verified on its page",
        )
    except (NotFound, Forbidden):
        raise
    except KnowledgeError as exc:  # a stale version: say so on the page, change nothing
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Verified version {done.entry.version}: you checked it.")
        ref = done.entry.short_id
    return redirect("web:entry", ref=ref)


@require_POST
@person
def set_status(request, ref: str):
    actor = request.actor
    status = request.POST.get("status", "")[:20]
    try:
        done = entry_set_status(
            actor=actor,
            ref=ref,
            status=status,
            expected_version=_expected_version(request),
            reason=(request.POST.get("reason") or "").strip()[:200],
        )
    except (NotFound, Forbidden):
        raise
    except KnowledgeError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Status is now {done.entry.get_status_display().lower()}.")
        ref = done.entry.short_id
    return redirect("web:entry", ref=ref)


@require_POST
@person
def undelete(request, ref: str):
    reason = (request.POST.get("reason") or "").strip()[:200] or "brought back on its page"
    try:
        done = entry_undelete(actor=request.actor, ref=ref, reason=reason).entry
    except (NotFound, Forbidden):
        raise
    except KnowledgeError as exc:  # e.g. another entry took its title: say so, change nothing
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Brought back as version {done.version}, with its history.")
        ref = done.short_id
    return redirect("web:entry", ref=ref)


SEARCH_FIELDS = ("q", "project", "subtopic", "kind", "tag", "status", "after", "before")
# The form's names that differ from SearchFilters' (the page's links and bookmarks keep them).
FILTER_NAMES = {"kind": "kinds", "tag": "tags", "history": "include_history"}


@require_GET
@person
def search(request):
    actor = request.actor
    form = {name: (request.GET.get(name) or "").strip()[:MAX_QUERY] for name in SEARCH_FIELDS}
    form["history"] = request.GET.get("history") == "on"
    form["explain"] = request.GET.get("explain") == "on"
    hits, error, no_words = [], "", ""
    if form["q"]:
        try:
            filters = SearchFilters.pick({FILTER_NAMES.get(k, k): v for k, v in form.items()})
            hits = search_entries(actor, form["q"], filters=filters, limit=SEARCH_LIMIT)
            no_words = no_words_note(form["q"], hits)
        except KnowledgeError as exc:  # an unknown project, a bad date: said above the results
            error = exc.message
    context = {
        "form": form,
        "hits": hits,
        "results": _with_reasons(hits, form["explain"]),
        "no_words": no_words,
        "error": error,
        "limit": SEARCH_LIMIT,
    }
    if request.htmx:
        response = render(request, "web/_results.html", context)
    else:
        context |= pages.search_choices(actor)
        response = render(request, "web/search.html", context)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _with_reasons(hits, explain: bool) -> list[tuple]:
    """(hit, how it matched, why it ranks there or None): the reasons for the top hits only,
    and only when the explain box is ticked."""
    return [
        (
            hit,
            MATCHED.get(tuple(hit.matched), ""),
            explain_parts(hit) if explain and i < EXPLAIN_TOP else None,
        )
        for i, hit in enumerate(hits)
    ]


MATCHED = {
    ("text", "semantic"): "words + meaning",
    ("text",): "by words",
    ("semantic",): "by meaning",
}
GRAPH_LIMIT = 2000


@require_GET
@person
def graph(request):
    actor = request.actor
    context = pages.search_choices(actor) | {
        "project": (request.GET.get("project") or "").strip()[:80],
        "around": (request.GET.get("around") or "").strip()[:200],
    }
    return render(request, "web/graph.html", context)


@require_GET
@person(as_json=True)
def graph_json(request):
    """The graph's nodes and edges for the page's script, scoped like every read; an unknown
    project or entry is `{"error": message}` for the page to show."""
    project = (request.GET.get("project") or "").strip()[:80] or None
    around = (request.GET.get("around") or "").strip()[:200] or None
    try:
        depth = max(1, min(int(request.GET.get("depth") or 1), MAX_DEPTH))
    except ValueError:
        depth = 1
    data = graph_data(request.actor, project=project, around=around, depth=depth, limit=GRAPH_LIMIT)
    return JsonResponse(data)
