"""Filters for the pages: sanitized Markdown, highlighted snippets, badges."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

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
def indent(depth: int) -> str:
    return f"{min(int(depth or 0), 12) * 1.1:.1f}rem"


@register.filter
def entry_body(entry) -> str:
    """The entry's body rendered for its page (bounded and cached per version, sanitized)."""
    return mark_safe(render_entry_body(entry))
