"""The editor's live preview: the body rendered by the entry page's renderer (sanitized on the
server), and beside it the observations and relations a save would record, each link marked
resolved (with the entry it names) or missing, a title already taken where the entry goes, and
how the draft fits its note type's schema (knowledge/admin/note_types.py)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse

from knowledge.admin.note_types import live_schema
from knowledge.errors import KnowledgeError
from knowledge.reads.editor import body_preview
from knowledge.rendering import render_markdown, render_page_markdown


@staff_member_required
def markdown_preview(request: HttpRequest) -> HttpResponse:
    """EasyMDE's own preview button: rendered and sanitized on the server."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    return HttpResponse(render_markdown(request.POST.get("text", "")))


@staff_member_required
def live_preview(request: HttpRequest) -> HttpResponse:
    """The side panel of the entry form, as an HTML fragment (POST: text, project,
    subtopic_path, title, entry)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    post = request.POST
    text = post.get("text", "")
    entry = post.get("entry", "")
    context = {"error": "", "preview": None, "html": ""}
    try:
        context["preview"] = body_preview(
            request.actor,
            body=text,
            project=post.get("project", "")[:200] or None,
            subtopic=post.get("subtopic_path", "")[:500],
            title=post.get("title", "")[:300],
            entry=int(entry) if entry.isdigit() and len(entry) < 19 else None,
        )
        context["html"] = render_page_markdown(text)
        context |= live_schema(request)
    except KnowledgeError as exc:
        context["error"] = exc.message
    return TemplateResponse(request, "knowledge/admin/entries/live_preview.html", context)
