from django.contrib.auth import get_user_model

from knowledge.actors import Actor
from knowledge.management.base import DataCommand
from knowledge.models import Project
from knowledge.services import EntryFields, entry_upsert, project_create

PROJECTS = [
    ("customer-x", "Customer X", "internal", "Everything we know about Customer X."),
    ("platform", "Platform", "internal", "How our platform is built and run."),
    ("hiring", "Hiring", "confidential", "Candidates and interview notes."),
]

ENTRIES = [
    (
        "customer-x",
        "",
        "Account overview",
        "fact",
        ["account"],
        "# Customer X\n\nEnterprise plan since **2025-03**. Main contact: Dana (CTO).\n\n"
        "- 40 seats\n- EU data residency required\n",
    ),
    (
        "customer-x",
        "2026-08/incident",
        "Checkout outage 2026-08-14",
        "note",
        ["incident", "p1"],
        "## Timeline\n\n- 09:12 alerts on checkout latency\n- 09:40 rolled back release 4.2\n\n"
        "## Cause\n\nA missing index on `orders.customer_id` after a migration.\n",
    ),
    (
        "customer-x",
        "2026-08/incident",
        "Follow-up: add migration checks",
        "task",
        ["incident"],
        "Add a CI step that runs `EXPLAIN` on the hot queries after each migration.",
    ),
    (
        "platform",
        "decisions",
        "Use PostgreSQL for search",
        "decision",
        ["search", "postgres"],
        "We use Postgres full-text search plus pgvector instead of a separate search cluster: "
        "one system to run, transactional consistency, good enough recall.",
    ),
    (
        "platform",
        "runbooks/database",
        "Restore from backup",
        "note",
        ["runbook"],
        "1. Stop the workers\n2. `pg_restore -d cairn latest.dump`\n3. Start the workers\n",
    ),
    (
        "platform",
        "",
        "Team conventions",
        "fact",
        ["process"],
        "Code review within one working day. Deploys on Tuesdays and Thursdays.",
    ),
    (
        "hiring",
        "2026/backend",
        "Candidate: J. Doe",
        "person",
        ["backend"],
        "Strong Django background; second interview scheduled.",
    ),
]


class Command(DataCommand):
    help = "Load demo projects, nested subtopics and entries (safe to run again)."

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
                project_create(
                    actor=actor, slug=slug, name=name, sensitivity=sensitivity,
                    description=description, reason="demo data",
                )  # fmt: skip
        counts: dict[str, int] = {}
        for project, subtopic, title, kind, tags, body in ENTRIES:
            fields = EntryFields(title=title, body=body, kind=kind, tags=tags)
            result = entry_upsert(
                actor=actor, project=project, subtopic=subtopic, fields=fields, reason="demo data"
            )
            counts[result.outcome] = counts.get(result.outcome, 0) + 1
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        self.stdout.write(self.style.SUCCESS(f"Demo data: {len(PROJECTS)} projects; {summary}."))
