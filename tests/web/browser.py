"""What the browser tests do on a page (headless Chromium through Playwright): sign dana in, and
take a screenshot. With CAIRN_UPDATE_SCREENSHOTS=1 `shot` renews the pictures the README and the
guides show (docs/screenshots/); a picture no guide shows is not taken, so none lies unused in
git (tests/test_docs.py checks both ways). The fixtures they share (site, requests, csp) are in
conftest.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

ROOT = Path(__file__).resolve().parents[2]
# Screenshots are taken only to renew docs/screenshots/: a PNG of a full page costs a browser
# test more than every check on the page, and proves nothing no one looks at.
SHOTS = ROOT / "docs/screenshots" if os.environ.get("CAIRN_UPDATE_SCREENSHOTS") == "1" else None
PASSWORD = "a-long-browser-password-42"


def shown() -> set[str]:
    """The screenshots the README and the guides show (docs/screenshots/NAME.png)."""
    texts = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    return {m for p in texts for m in re.findall(r"screenshots/([\w.-]+\.png)", p.read_text())}


def sign_in(page: Page, base: str, username: str = "dana") -> None:
    page.goto(f"{base}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    page.fill("#id_login", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    expect(page).to_have_url(f"{base}/")


def shot(page: Page, name: str) -> None:
    if SHOTS is not None and name in shown():
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)
