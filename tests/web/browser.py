"""What the browser tests do on a page (headless Chromium through Playwright): sign dana in, and
take a screenshot. With CAIRN_UPDATE_SCREENSHOTS=1 `shot` takes the README's screenshots
(docs/screenshots/); without it, it takes none. The fixtures they share (site, requests, csp)
are in conftest.py."""

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


def sign_in(page: Page, base: str) -> None:
    page.goto(f"{base}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    page.fill("#id_login", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")
    expect(page).to_have_url(f"{base}/")


def shot(page: Page, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)
