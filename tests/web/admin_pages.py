"""What the admin's browser tests share: screenshots of a page at 1440 and 390 px, light and
dark, each checked for words broken across lines (the policy fixture, csp, is in conftest.py)."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.web.browser import SHOTS

SIZES = {"wide": (1440, 900), "phone": (390, 844)}


def shot(page: Page, name: str, *, every: bool = True) -> None:
    """`name` at 1440 px (light), and with `every` also at 390 px and in dark: admin-NAME.png,
    admin-NAME-phone.png, admin-NAME-dark.png, admin-NAME-phone-dark.png. No word on the page
    may be broken across lines (the page is checked at each size and scheme, whether or not
    CAIRN_UPDATE_SCREENSHOTS=1 asks for the pictures)."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
    stem = name.removesuffix(".png")
    kept = page.viewport_size
    schemes = ("light", "dark") if every else ("light",)
    for size, (width, height) in SIZES.items() if every else [("wide", (1440, 900))]:
        page.set_viewport_size({"width": width, "height": height})
        for scheme in schemes:
            page.emulate_media(color_scheme=scheme)
            # The theme's own switch (what a person picks in its menu), not only the media query.
            page.evaluate(f"Alpine.$data(document.documentElement).adminTheme = '{scheme}'")
            # The check reads the layout, which the browser computes when asked; the colours'
            # transition only matters to a picture.
            assert_no_broken_words(page, f"{stem} at {width} px, {scheme}")
            if SHOTS is not None:
                page.wait_for_timeout(80)
                suffix = "-phone" if size == "phone" else ""
                suffix += "-dark" if scheme == "dark" else ""
                page.screenshot(path=str(SHOTS / f"{stem}{suffix}.png"), full_page=True)
    page.emulate_media(color_scheme="light")
    page.evaluate("Alpine.$data(document.documentElement).adminTheme = 'auto'")
    page.set_viewport_size(kept)


# A word broken mid-way shows as a text node whose one word spans two lines.
BROKEN_WORDS = """() => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!parent || parent.closest("pre, code, .CodeMirror, svg, script, style, textarea")) continue;
    const text = node.textContent;
    for (const match of text.matchAll(/[A-Za-z]{4,}/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
      const tops = new Set(rects.map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""


def assert_no_broken_words(page: Page, where: str) -> None:
    broken = page.evaluate(BROKEN_WORDS)
    assert not broken, f"{where}: words broken across lines: {broken[:10]}"
