"""Markdown → HTML that is safe to show: every rendered body goes through nh3."""

import re

import markdown
import nh3

_EXTENSIONS = ["fenced_code", "tables", "sane_lists", "toc"]
_TAGS = nh3.ALLOWED_TAGS | {
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "code",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
    "del",
    "input",
    "span",
    "img",
}


def render_markdown(text: str) -> str:
    html = markdown.markdown(text or "", extensions=_EXTENSIONS, output_format="html")
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes={
            **nh3.ALLOWED_ATTRIBUTES,
            "img": {"src", "alt", "title"},
            "input": {"type", "checked", "disabled"},
            "th": {"align"},
            "td": {"align"},
            "h1": {"id"},
            "h2": {"id"},
            "h3": {"id"},
            "h4": {"id"},
        },
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


# --- pages for people: code highlighting (Pygments, CSS classes) and task lists -------------

_PAGE_EXTENSIONS = [*(e for e in _EXTENSIONS if e != "fenced_code"), "fenced_code", "codehilite"]
_PAGE_CONFIG = {"codehilite": {"css_class": "highlight", "guess_lang": False}}
_TASK = re.compile(r"<li>(\s*<p>)?\s*\[([ xX])\]\s")
_CLASSED = {"span", "div", "code", "pre", "li"}


def _task_box(match: re.Match) -> str:
    checked = " checked" if match.group(2) in "xX" else ""
    return f'<li class="task">{match.group(1) or ""}<input type="checkbox" disabled{checked}> '


def render_page_markdown(text: str) -> str:
    """Markdown for the web pages: what render_markdown allows, plus highlighted code blocks
    (Pygments classes) and task lists (`- [ ]` / `- [x]` as disabled check boxes)."""
    html = markdown.markdown(
        text or "",
        extensions=_PAGE_EXTENSIONS,
        extension_configs=_PAGE_CONFIG,
        output_format="html",
    )
    html = _TASK.sub(_task_box, html)
    attributes = {
        **nh3.ALLOWED_ATTRIBUTES,
        "img": {"src", "alt", "title"},
        "input": {"type", "checked", "disabled"},
        "th": {"align"},
        "td": {"align"},
        **{f"h{n}": {"id"} for n in range(1, 7)},
    }
    for tag in _CLASSED:
        attributes[tag] = {*attributes.get(tag, set()), "class"}
    return nh3.clean(
        html,
        tags=_TAGS | {"div"},
        attributes=attributes,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
