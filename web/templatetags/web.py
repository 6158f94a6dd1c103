"""Filters for the pages: sanitized Markdown, highlighted snippets, badges."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from knowledge.inputs import linkable_url
from knowledge.rendering import render_entry_body, render_page_markdown

register = template.Library()
_HIGHLIGHT = re.compile(r"\*\*(.+?)\*\*")


@register.filter
def markdown(text: str) -> str:
    """The entry's Markdown, rendered and sanitized (nh3) before it is marked safe."""
    return mark_safe(render_page_markdown(text))


@register.filter
def snippet(text: str) -> str:
    """A search snippet: escaped, with its `**highlights**` as <mark>."""
    return mark_safe(_HIGHLIGHT.sub(r"<mark>\1</mark>", escape(text or "")))


@register.filter
def link_target(url: str | None) -> str:
    """The url when a page may link it (http, https, mailto or a configured scheme), else "".
    Writes refuse other schemes; this keeps any older or hand-made row from becoming a link."""
    return url if linkable_url(url) else ""


@register.filter
def indent(depth: int) -> int:
    """The tree's indent class (depth-0 … depth-12 in cairn.css): a class, since the
    Content-Security-Policy refuses inline style attributes."""
    return min(int(depth or 0), 12)


@register.filter
def entry_body(entry) -> str:
    """The entry's body rendered for its page (bounded and cached per version, sanitized)."""
    return mark_safe(render_entry_body(entry))


@register.filter
def field_names(checks) -> str:
    """The fields of a schema report's misfits, `role, team` (the first five)."""
    names = [c.field.name for c in checks]
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


@register.filter
def difflines(text: str) -> list[dict]:
    """A diff's lines, each with its kind (add, del, hunk, file) for the page's colours."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}

    def kind(line: str) -> str:
        return "file" if line.startswith(("+++", "---")) else kinds.get(line[:1], "")

    return [{"text": line, "kind": kind(line)} for line in (text or "").splitlines()]
