"""Browser tests drive the system Chromium through Playwright (its own download is not
reachable everywhere): `make test` installs Debian's `chromium` when it is missing, and
CAIRN_CHROMIUM names another binary. A missing browser fails the browser tests, never skips.

The fixtures the browser tests share: `site`, a live server with dana's launch project and its
linked entries; `requests`, every URL the page asked for; `csp`, which fails a test whose
pages break the Content-Security-Policy or its headers, or report a script error."""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from knowledge.actors import Actor
from knowledge.models import Entry, Membership, Role
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_update,
    entry_upsert,
    project_create,
)
from tests.factories import UserFactory
from tests.web.browser import PASSWORD

# Playwright's sync API runs an event loop in the test thread; the test's own ORM calls
# (fixtures, checks) are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    for candidate in (os.environ.get("CAIRN_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.fail(
        "The browser tests need Chromium and found none. On Debian/Ubuntu run "
        "`apt-get install chromium` (make test does it when run as root); elsewhere run "
        "`.venv/bin/python -m playwright install chromium` and set CAIRN_CHROMIUM to the "
        "binary it prints, or point CAIRN_CHROMIUM at any Chromium or Chrome.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": chromium_path(),
        "args": CHROMIUM_FLAGS,
    }


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The browser tests run last. Playwright's sync API keeps an asyncio loop running in the
    main thread from its session-scoped start until the session ends, and tests that call
    anyio.run / asyncio.run (the MCP client) fail inside a running loop. pytest-django sorts
    transactional tests (these use live_server) in among them; this puts ours at the end."""
    # Every test that drives the browser (asks for Playwright's `page`), wherever it lives.
    browser = [item for item in items if "page" in getattr(item, "fixturenames", ())]
    if browser:
        others = [item for item in items if item not in browser]
        items[:] = others + browser


# --- what the browser tests share ---------------------------------------------------------------

BODY = """## Why

We launch in **three steps**; the checklist lives below.

| step | owner | when |
|---|---|---|
| freeze | Dana | Mon |
| deploy | Sam | Tue |

```python
def rollout(percent: int) -> None:
    flags.set("checkout-v2", percent)
```

- [x] write the plan
- [ ] tell support

- [decision] Ship behind the checkout-v2 flag #flags (agreed with support)
- [risk] Support hears of it last
- depends_on [[Rollout risks]]
- [[Launch retro]]
"""


@pytest.fixture
def site(live_server):
    person = UserFactory(username="dana")
    person.set_password(PASSWORD)
    person.save()
    owner = Actor.for_user(person)
    for project in (
        project_create(
            actor=owner,
            slug="launch",
            fields=ProjectFields(name="Launch", description="The Q3 launch."),
        ),
        project_create(
            actor=owner,
            slug="platform",
            fields=ProjectFields(name="Platform", sensitivity="public"),
        ),
    ):
        Membership.objects.update_or_create(
            project=project, user=person, defaults={"role": Role.MAINTAINER}
        )
    agent = Actor(user=person, agent="agent:claude-code")
    plan = entry_upsert(
        actor=agent,
        project="launch",
        subtopic="checkout/rollout",
        fields=EntryFields(
            title="Checkout v2 rollout plan",
            body=BODY.replace("three steps", "two steps"),
            kind="decision",
            tags=["checkout", "rollout"],
        ),
        sources=[{"kind": "url", "external_id": "t1", "url": "https://tickets.example/T-1"}],
    ).entry
    entry_update(
        actor=agent, ref=plan.pk, fields=EntryFields(body=BODY), reason="three steps, not two"
    )
    entry_upsert(
        actor=agent,
        project="launch",
        subtopic="checkout",
        fields=EntryFields(
            title="Rollout risks",
            body="The rollout may slow the checkout; watch p95 latency.\n\n"
            "- relates_to [[platform/runbooks/Feature flags]]\n",
            status="open",
        ),
    )
    entry_upsert(
        actor=agent,
        project="platform",
        subtopic="runbooks",
        fields=EntryFields(
            title="Feature flags",
            body="Flags are set with `flags.set(name, percent)`.",
            kind="fact",
        ),
    )
    return {"url": live_server.url, "plan": Entry.objects.get(pk=plan.pk), "person": person}


@pytest.fixture
def requests(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


CSP_DIRECTIVES = (
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "object-src 'none'", "base-uri 'self'", "frame-ancestors 'none'", "form-action 'self'",
)  # fmt: skip


ADMIN_SCRIPT_SRC = "script-src 'self' 'unsafe-eval'"


@pytest.fixture
def csp(page: Page):
    """Every page the test opens must send the policy and headers (the admin's on /admin/: its
    theme's Alpine.js needs 'unsafe-eval', and nothing else), and the browser must report no
    violation of it (an inline script, handler or style it refused), no script error and no
    static file it could not load."""
    seen: dict[str, dict] = {}
    violations: list[str] = []
    page.on(
        "response",
        lambda r: seen.setdefault(r.url, r.headers) if r.request.resource_type == "document" else 0,
    )
    page.on(
        "console",
        lambda m: (
            violations.append(f"{page.url}: {m.text}")
            if "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: violations.append(f"{page.url}: script error: {error}"))
    page.on(
        "response",
        lambda r: (
            violations.append(f"{r.url}: {r.status}")
            if "/static/" in r.url and r.status >= 400
            else 0
        ),
    )
    yield seen
    assert not violations, violations
    assert seen, "no page was opened"
    for url, headers in seen.items():
        policy = headers.get("content-security-policy", "")
        admin = urlsplit(url).path.startswith("/admin/")
        wanted = [ADMIN_SCRIPT_SRC if d.startswith("script-src") and admin else d
                  for d in CSP_DIRECTIVES]  # fmt: skip
        assert all(d in policy for d in wanted), (url, policy)
        loosened = policy.replace("'unsafe-eval'", "") if admin else policy
        assert "unsafe" not in loosened, (url, policy)
        assert headers.get("x-content-type-options") == "nosniff", url
        assert headers.get("referrer-policy") == "same-origin", url
        assert headers.get("x-frame-options") == "DENY", url
