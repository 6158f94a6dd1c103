from django.contrib.auth import get_user_model

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists
from knowledge.management.base import DataCommand
from knowledge.models import Project
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_create,
    entry_edit,
    entry_update,
    entry_upsert,
    project_create,
    token_create,
)

PROJECTS = [
    ("customer-x", "Customer X", "internal", "Everything we know about Customer X."),
    ("platform", "Platform", "internal", "How our platform is built and run."),
    ("hiring", "Hiring", "confidential", "Candidates and interview notes."),
]
# Platform warns on writes that do not fit a note type's schema (see README "Note types and
# schemas"); the other projects only report.
SCHEMA_MODES = {"platform": "warn"}

PERSON_SCHEMA = """What every person entry on the platform team holds.

```yaml
role: string, what they do
team: string, the team they belong to
expertise?(array): string, what to ask them about
```
"""

# (project, subtopic, title, kind, tags, status, body): `- [category] …` lines are
# observations, `- relation [[Title]]` lines are links (see README "Knowledge graph").
ENTRIES = [
    (
        "customer-x",
        "",
        "Account overview",
        "fact",
        ["account"],
        "active",
        "# Customer X\n\nEnterprise plan since **2025-03**.\n\n"
        "- [plan] Enterprise, since 2025-03\n- [seats] 40\n"
        "- [requirement] EU data residency #compliance\n"
        "- main_contact [[Dana Reyes]]\n- had [[Checkout outage 2026-08-14]]\n",
    ),
    (
        "customer-x",
        "",
        "Dana Reyes",
        "person",
        ["contact"],
        "active",
        "Customer X's CTO and our main contact.\n\n- [role] CTO\n- [prefers] email over calls\n"
        "- reported [[Checkout outage 2026-08-14]]\n",
    ),
    (
        "customer-x",
        "2026-08/incident",
        "Checkout outage 2026-08-14",
        "note",
        ["incident", "p1"],
        "active",
        "## Timeline\n\n- 09:12 alerts on checkout latency\n- 09:40 rolled back release 4.2\n\n"
        "## Cause\n\nA missing index on `orders.customer_id` after a migration.\n\n"
        "- [cause] missing index on orders.customer_id #database\n- [impact] 28 minutes\n"
        "- followed_up_by [[Follow-up: add migration checks]]\n",
    ),
    (
        "customer-x",
        "2026-08/incident",
        "Follow-up: add migration checks",
        "task",
        ["incident"],
        "open",
        "Add a CI step that runs `EXPLAIN` on the hot queries after each migration.\n\n"
        "- [owner] platform team\n- prevents [[Checkout outage 2026-08-14]]\n",
    ),
    (
        "platform",
        "",
        "person",
        "schema",
        ["schema"],
        "active",
        PERSON_SCHEMA,
    ),
    (
        "platform",
        "people",
        "Priya Natarajan",
        "person",
        ["team"],
        "active",
        "- [role] Staff engineer\n- [team] Platform\n- [expertise] PostgreSQL\n"
        "- [expertise] search\n- decided [[Use PostgreSQL for search]]\n",
    ),
    (
        "platform",
        "people",
        "Tom Becker",
        "person",
        ["team"],
        "active",
        # no `- [team]`: the entry that does not fit the person schema
        "- [role] Site reliability engineer\n- [expertise] backups\n"
        "- maintains [[Restore from backup]]\n",
    ),
    (
        "platform",
        "decisions",
        "Use PostgreSQL for search",
        "decision",
        ["search", "postgres"],
        "active",
        "We use Postgres full-text search plus pgvector instead of a separate search cluster: "
        "one system to run, transactional consistency, good enough recall.\n\n"
        "- [reason] one system to run\n- [reason] transactional consistency\n"
        "- decided_by [[Priya Natarajan]]\n- relates_to [[Restore from backup]]\n",
    ),
    (
        "platform",
        "runbooks/database",
        "Restore from backup",
        "note",
        ["runbook"],
        "active",
        "1. Stop the workers\n2. `pg_restore -d cairn latest.dump`\n3. Start the workers\n\n"
        "- [duration] about 20 minutes\n- maintained_by [[Tom Becker]]\n",
    ),
    (
        "platform",
        "",
        "Team conventions",
        "fact",
        ["process"],
        "active",
        "Code review within one working day. Deploys on Tuesdays and Thursdays.\n\n"
        "- [review] within one working day\n- [deploys] Tuesdays and Thursdays\n"
        "- agreed_by [[Priya Natarajan]]\n- agreed_by [[Tom Becker]]\n",
    ),
    (
        "hiring",
        "2026/backend",
        "Candidate: J. Doe",
        "person",
        ["backend"],
        "active",
        "Strong Django background; second interview scheduled.\n\n"
        "- [stage] second interview\n- [strength] Django\n",
    ),
]


CALL_NOTES = """Call with Dana Reyes about the renewal.

- [seats] 55 from October #renewal
- [risk] wants EU data residency in writing
- follows [[Account overview]]
"""


class Command(DataCommand):
    help = (
        "Load demo projects, nested subtopics and entries with observations, links, a person "
        "schema (one entry does not fit it), an open task and an agent's run of writes (safe "
        "to run again: entries that exist are left as they are)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty", action="store_true", help="only when there are no projects yet"
        )

    def handle(self, *args, if_empty, **options):
        if if_empty and Project.objects.exists():
            return
        user, _ = get_user_model().objects.get_or_create(
            username="demo", defaults={"email": "demo@example.com", "is_active": True}
        )
        actor = Actor.for_user(user, agent="human:demo")  # the demo user it made, not self.actor
        for slug, name, sensitivity, description in PROJECTS:
            if not Project.objects.filter(slug=slug).exists():
                fields = ProjectFields(
                    name=name, sensitivity=sensitivity, description=description,
                    schema_mode=SCHEMA_MODES.get(slug),
                )  # fmt: skip
                project_create(actor=actor, slug=slug, fields=fields, reason="demo data")
        counts: dict[str, int] = {}
        for project, subtopic, title, kind, tags, status, body in ENTRIES:
            fields = EntryFields(title=title, body=body, kind=kind, tags=tags, status=status)
            try:
                entry_create(
                    actor=actor, project=project, subtopic=subtopic, fields=fields,
                    reason="demo data",
                )  # fmt: skip
                outcome = "created"
            except AlreadyExists:  # what is there stays: the demo's agent (or you) changed it
                outcome = "unchanged"
            counts[outcome] = counts.get(outcome, 0) + 1
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        writes = self._agent_run(user) if counts.get("created") else 0
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo data: {len(PROJECTS)} projects; {summary}; an agent's run of {writes} "
                "writes (the runs page lists it)."
            )
        )

    def _agent_run(self, user) -> int:
        """What an agent wrote after a customer call, through a token of the demo user's: one
        run, to see (and undo) on the runs page."""
        token = token_create(
            actor=Actor.system(), user=user, name="demo agent", agent_label="agent:claude-code"
        ).token
        agent = Actor(user=user, agent=token.agent_label, token_id=token.pk)
        fields = EntryFields(title="Renewal call 2026-09-02", body=CALL_NOTES, kind="note",
                             tags=["call", "renewal"])  # fmt: skip
        entry_upsert(actor=agent, project="customer-x", subtopic="calls", fields=fields)
        edit = {"operation": "find_replace", "find": "- [seats] 40", "content": "- [seats] 55"}
        entry_edit(actor=agent, ref="customer-x/Account overview", reason="after the call", **edit)
        tags = EntryFields(tags=["contact", "renewal"])
        entry_update(actor=agent, ref="customer-x/Dana Reyes", fields=tags, reason="renewal")
        return 3
