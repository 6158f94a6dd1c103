"""Markdown → HTML that is safe to show: every rendered body goes through nh3."""

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
