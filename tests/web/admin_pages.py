"""What the admin's browser tests share: each page checked at 1440 and 390 px, light and dark,
for words broken across lines and, on a phone, for sideways scrolling; its light 1440 px picture
taken when a guide shows it (the policy fixture, csp, is in conftest.py)."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.web.browser import SHOTS, shown

SIZES = {"wide": (1440, 900), "phone": (390, 844)}


def shot(page: Page, name: str, *, every: bool = True) -> None:
    """Check `name` at 1440 px in light and, with `every`, at 390 px and in dark too: no word
    on the page may be broken across lines, and on a phone the page may not scroll sideways
    (its picture would be wider than the phone). With CAIRN_UPDATE_SCREENSHOTS=1, take the
    light 1440 px picture, admin-NAME.png, when a guide shows it."""
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
            if size == "phone":
                wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert wider <= 0, (
                    f"{stem} scrolls sideways on a phone by {wider} px: {page.evaluate(SIDEWAYS)}"
                )
            if SHOTS is not None and size == "wide" and scheme == "light" and name in shown():
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.wait_for_timeout(80)
                page.screenshot(path=str(SHOTS / name), full_page=True)
    page.emulate_media(color_scheme="light")
    page.evaluate("Alpine.$data(document.documentElement).adminTheme = 'auto'")
    page.set_viewport_size(kept)


# The innermost elements that reach past the right edge of the window (what makes a page scroll
# sideways), named by tag, id and classes.
SIDEWAYS = """(() => {
  const wide = [...document.body.querySelectorAll("*")].filter(
    e => e.getBoundingClientRect().right > window.innerWidth + 0.5);
  return wide.filter(e => !wide.some(o => o !== e && e.contains(o))).slice(0, 8).map(
    e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
         [...e.classList].slice(0, 3).map(c => "." + c).join(""));
})()"""


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
