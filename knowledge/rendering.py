"""Markdown → HTML that is safe to show.

cmark-gfm (C, linear in its input) parses; nh3 sanitises twice: first what the author wrote
(raw HTML stays, but loses every class and id, so a body cannot dress up as the page's copy
button, history anchor or verified badge), then, as the last step, what this module added
(heading ids, highlighted code, task items), keeping only the classes it emits itself and
giving every id the `md-` prefix. Bodies past CAIRN_RENDER_MAX_BYTES or with a line past
CAIRN_RENDER_MAX_LINE_CHARS are shown as escaped plain text: no parser sees them at all.
"""

from __future__ import annotations

import functools
import hashlib
import html as htmllib
import re
import unicodedata

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options
from django.conf import settings
from django.core.cache import caches
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

_EXTENSIONS = ["table", "strikethrough", "tasklist"]
# Raw HTML is let through to nh3 (as Python-Markdown did) rather than dropped, so `<br>` or
# `<kbd>` in a body still work; GITHUB_PRE_LANG names a fence's language in an attribute that
# survives the first pass, unlike a class.
_OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG
ID_PREFIX = "md-"
TOO_LARGE_NOTE = "This entry is too large to render; shown as plain text."
# Pygments' lexers are regular expressions written for code, not for hostile input: only this
# much of one body is highlighted, the rest stays plain (escaped) code.
HIGHLIGHT_BUDGET_CHARS = 50_000
HIGHLIGHT_BLOCK_COST = 500  # what one block counts against the budget at least (lexer setup)
# html5ever (inside nh3) checks the stack of open elements for each tag, so its time grows with
# depth times length: 40 KB of `>` (40,000 nested quotes) took 19 s. Deeper than this is plain text.
MAX_DEPTH = 100

_TAGS = nh3.ALLOWED_TAGS | {
    *(f"h{n}" for n in range(1, 7)),
    *("pre", "code", "table", "thead", "tbody", "tr", "th", "td", "hr", "del", "input"),
    *("span", "div", "img"),
}
_URL_SCHEMES = {"http", "https", "mailto"}
_AUTHOR_ATTRIBUTES = {
    **{tag: names - {"class", "id"} for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
    "img": {"src", "alt", "title"},
    "input": {"type", "checked", "disabled"},
    "th": {"align"},
    "td": {"align"},
    "pre": {"lang"},
}
_PAGE_ATTRIBUTES = {
    **{tag: names for tag, names in _AUTHOR_ATTRIBUTES.items() if tag != "pre"},
    **{f"h{n}": {"id"} for n in range(1, 7)},
}
_TOKEN_CLASSES = {name for name in STANDARD_TYPES.values() if name}
_ALLOWED_CLASSES = {"div": {"highlight"}, "span": _TOKEN_CLASSES, "li": {"task"}}
_FORMATTER = HtmlFormatter(cssclass="highlight")

_OPEN_OR_CLOSE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
_VOID |= {"track", "wbr", "param"}
# After nh3 a heading is well formed and holds no other heading: the lazy scan stops at its end.
_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_SLUG_DROP = re.compile(r"[^\w\s-]")
_SLUG_GAP = re.compile(r"[-\s]+")
# nh3 writes attributes as ` name="value"` with `"` escaped, so these cannot backtrack.
_IMG = re.compile(r'<img((?: [a-z]+="[^"]*")*)>')
_ATTR = re.compile(r' ([a-z]+)="([^"]*)"')
_INPUT = re.compile(r'<input((?: [a-z]+="[^"]*")*)>')
_TASK = re.compile(r'<li>(\n?<p>)?<input type="checkbox" disabled(?: checked)?>')
_CODE = re.compile(r'<pre lang="([^"]*)"><code>([^<]*)</code></pre>')
_FIRST_SEGMENT = re.compile(r"[/?#]")


def too_large(text: str) -> bool:
    """Whether `text` is past the rendering bounds (shown as plain text, diffed line by line)."""
    text = text or ""
    if len(text) > settings.CAIRN_RENDER_MAX_BYTES or (
        len(text.encode()) > settings.CAIRN_RENDER_MAX_BYTES
    ):
        return True
    longest = settings.CAIRN_RENDER_MAX_LINE_CHARS
    return len(text) > longest and any(len(line) > longest for line in text.splitlines())


def render_markdown(text: str) -> str:
    """For the admin: what the pages show, without code highlighting."""
    return _render(text, code=False)


def render_page_markdown(text: str) -> str:
    """Markdown for the web pages: tables, strikethrough, task lists (disabled check boxes),
    and fenced code with a named language highlighted by Pygments (CSS classes)."""
    return _render(text, code=True)


def render_entry_body(entry) -> str:
    """The entry's body for its page, cached per (entry, version, options). The body's hash is
    in the key too, so a reused id or an edit that kept the version cannot show stale HTML."""
    body = entry.body or ""
    if too_large(body):
        return _plain(body)  # cheap, and not worth a cache slot
    digest = hashlib.blake2b(body.encode(), digest_size=12).hexdigest()
    key = f"render:{entry.pk}:{entry.version}:{int(_remote_images())}:{digest}"
    cache = caches[settings.CAIRN_RENDER_CACHE]
    html = cache.get(key)
    if html is None:
        html = render_page_markdown(body)
        cache.set(key, html, settings.CAIRN_RENDER_CACHE_SECONDS)
    return html


def _render(text: str, *, code: bool) -> str:
    text = text or ""
    if too_large(text):
        return _plain(text)
    html = cmarkgfm.markdown_to_html_with_extensions(text, options=_OPTIONS, extensions=_EXTENSIONS)
    if _too_deep(html):
        return _plain(text)
    html = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_AUTHOR_ATTRIBUTES,
        url_schemes=_URL_SCHEMES,
        link_rel=None,
    )
    if not _remote_images():
        html = _IMG.sub(_local_image, html)
    html = _INPUT.sub(_check_box, html)
    html = _TASK.sub(lambda m: '<li class="task">' + m.group(0)[len("<li>") :], html)
    html = _heading_ids(html)
    if code:
        budget = [HIGHLIGHT_BUDGET_CHARS]
        html = _CODE.sub(lambda m: _highlighted(m, budget), html)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_PAGE_ATTRIBUTES,
        allowed_classes=_ALLOWED_CLASSES,
        url_schemes=_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        id_prefix=ID_PREFIX,
    )


def _plain(text: str) -> str:
    return f"<p><em>{TOO_LARGE_NOTE}</em></p>\n<pre>{htmllib.escape(text)}</pre>"


def _remote_images() -> bool:
    return settings.CAIRN_RENDER_REMOTE_IMAGES


def _local_image(match: re.Match) -> str:
    """An image on another host would make every reader's browser call that host: it becomes a
    link to the image instead (the reader may follow it), labelled with its alt text."""
    attrs = {name: htmllib.unescape(value) for name, value in _ATTR.findall(match.group(1))}
    src = re.sub(r"[\t\n\r]", "", attrs.get("src", "")).lstrip("\x00- ")
    if _on_this_site(src):
        return match.group(0)
    label = htmllib.escape(attrs.get("alt") or src or "image")
    return f'<a href="{htmllib.escape(src)}">{label}</a>' if src else label


def _on_this_site(url: str) -> bool:
    """A path on this site (`/static/x.png`, `x.png`), not `//host/…`, `/\\host` or `scheme:`."""
    if url.startswith(("//", "/\\", "\\")):
        return False
    return url.startswith("/") or ":" not in _FIRST_SEGMENT.split(url, maxsplit=1)[0]


def _check_box(match: re.Match) -> str:
    """The only input a body may show is a task's check box, and one nobody can tick."""
    checked = " checked" if ' checked="' in match.group(1) else ""
    return f'<input type="checkbox" disabled{checked}>'


def _too_deep(html: str) -> bool:
    """Whether elements nest past MAX_DEPTH, counted from tag names alone (a linear scan; an
    unclosed raw `<div>` counts as open, as it does for the HTML parser)."""
    depth = 0
    for match in _OPEN_OR_CLOSE.finditer(html):
        if match.group(2).lower() in _VOID:
            continue
        depth = max(depth - 1, 0) if match.group(1) else depth + 1
        if depth > MAX_DEPTH:
            return True
    return False


def _heading_ids(html: str) -> str:
    """Each heading gets an id from its text, made unique with -1, -2 … (nh3 adds the prefix)."""
    seen: set[str] = set()
    last: dict[str, int] = {}

    def with_id(match: re.Match) -> str:
        text = unicodedata.normalize("NFKD", htmllib.unescape(_TAG.sub("", match.group(2))))
        text = _SLUG_DROP.sub("", text.encode("ascii", "ignore").decode().lower())
        slug = _SLUG_GAP.sub("-", text).strip("-_") or "section"
        unique, n = slug, last.get(slug, 0)
        while unique in seen:  # resumes where the last twin stopped: no rescans
            n += 1
            unique = f"{slug}-{n}"
        seen.add(unique)
        last[slug] = n
        level = match.group(1)
        return f'<h{level} id="{unique}">{match.group(2)}</h{level}>'

    return _HEADING.sub(with_id, html)


@functools.lru_cache(maxsize=256)
def _lexer(name: str):
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


def _highlighted(match: re.Match, budget: list[int]) -> str:
    source = htmllib.unescape(match.group(2))
    cost = max(len(source), HIGHLIGHT_BLOCK_COST)
    name = htmllib.unescape(match.group(1))
    # No lexer's name is longer: a fence's info string must not become a long cache key.
    lexer = _lexer(name) if cost <= budget[0] and len(name) <= 40 else None
    if lexer is None:
        return f"<pre><code>{match.group(2)}</code></pre>"
    budget[0] -= cost
    return highlight(source, lexer, _FORMATTER)
