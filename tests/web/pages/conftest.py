"""What the page tests share: alice signed in to acme, her launch plan (an entry with Markdown of
every kind, a source and two versions) and a restricted project's entry she may not see."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.models import Sensitivity
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_update,
    entry_upsert,
    project_create,
)
from tests.factories import UserFactory

BODY = """# Plan

Some **bold** text and a [link](https://example.org/x).

| a | b |
|---|---|
| 1 | 2 |

```python
def answer():
    return 42
```

- [ ] open task
- [x] done task

<script>alert("x")</script><img src="javascript:alert(1)" onerror="alert(2)">
"""


@pytest.fixture
def alice(client, user, project):
    client.force_login(user)
    return client


@pytest.fixture
def plan(actor, project):
    entry = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="ops/2026",
        fields=EntryFields(title="Launch plan", body=BODY, kind="decision", tags=["launch", "q3"]),
        sources=[{"kind": "url", "external_id": "s1", "url": "https://example.org/s1"}],
    ).entry
    return entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(body=BODY + "\nOne more line.\n")
    ).entry


@pytest.fixture
def hidden(db):
    root = UserFactory(username="root", is_superuser=True)
    owner = Actor.for_user(root)
    project_create(
        actor=owner,
        slug="vault",
        fields=ProjectFields(name="Vault", sensitivity=Sensitivity.RESTRICTED),
    )
    return entry_upsert(
        actor=owner, project="vault", fields=EntryFields(title="Hidden zebracorn", body="secret")
    ).entry
