"""What a `mirror restore` would do, said before it does it.

A mirror is a git repository: whoever can push to its remote can write any file and any
trailer in it. So the operator sees, before anything is written, which projects come back with
which sensitivity, who becomes a member of what (matched to this installation's accounts by
username only), which authors' names match accounts here, whether verification marks are kept,
and what happens to API tokens narrowed to projects.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from history.mirror.git import TRAILER_REVISION, Mirror, trailers_of
from knowledge.models import ApiToken, Entry, Project
from knowledge.records import ProjectRecord


@dataclass
class RestorePlan:
    source: str
    mirror: Mirror
    cloned: bool
    credentials: bool  # the push credentials were offered to the source
    projects: list[ProjectRecord] | None  # the manifest's (None: the mirror has none)
    sensitivity: str  # of every project the manifest does not describe
    keep_verified: bool = False
    memberships: bool = True
    revisions: int = 0
    head: str = ""  # the commit the plan was read at: apply restores exactly it
    slugs: list[str] = field(default_factory=list)  # projects the revisions name
    authors: list[str] = field(default_factory=list)  # usernames the revisions name


def survey(plan: RestorePlan, commits) -> None:
    """Count the revisions and gather the projects and authors their trailers name."""
    slugs, authors = set(), set()
    for commit in commits:
        trailers = trailers_of(commit.message)
        if TRAILER_REVISION not in trailers:
            continue
        plan.revisions += 1
        if trailers.get("Cairn-Project"):
            slugs.add(trailers["Cairn-Project"])
        if trailers.get("Cairn-User"):
            authors.add(trailers["Cairn-User"])
    plan.slugs, plan.authors = sorted(slugs), sorted(authors)


def _existing(usernames: set[str]) -> set[str]:
    model = get_user_model()
    field_name = model.USERNAME_FIELD
    found = model.objects.filter(**{f"{field_name}__in": usernames})
    return set(found.values_list(field_name, flat=True))


def describe(plan: RestorePlan) -> list[str]:
    """The plan as lines for the operator, in the order they are applied."""
    lines = [
        f"Restore from {plan.source}"
        + (" (cloned with the push credentials)." if plan.credentials else ".")
    ]
    head = plan.mirror.repo.get(plan.head)
    if head is not None:
        when = dt.datetime.fromtimestamp(head.commit_time, dt.UTC)
        lines.append(
            f"Up to its head, commit {plan.head} ({when:%Y-%m-%d %H:%M} UTC): exactly that is "
            "restored (a mirror that moves before you answer is refused)."
        )
    if Project.objects.exists() or Entry.history.exists():
        lines.append(
            f"Replaces what the database holds now: {Project.objects.count()} project(s), "
            f"{Entry.objects.count()} entr(y/ies) and their history."
        )
    described = {p.slug: p for p in plan.projects or []}
    names = sorted(set(described) | set(plan.slugs))
    lines.append(f"Projects ({len(names)}):")
    for slug in names:
        item = described.get(slug)
        if item is not None:
            sensitivity = item.settings.get("sensitivity", "?")
            lines.append(f"  {slug}: {sensitivity} (as the manifest says)")
        else:
            lines.append(f"  {slug}: {plan.sensitivity} (not in a manifest: --sensitivity)")
    members = [(slug, m) for slug, item in described.items() for m in item.memberships]
    users = {m.user for _, m in members if m.user}
    existing = _existing(users | set(plan.authors))
    if not members:
        lines.append("Memberships: none in the mirror.")
    elif not plan.memberships:
        lines.append(f"Memberships: {len(members)} in the mirror, NOT applied (--no-memberships).")
    else:
        lines.append(f"Memberships ({len(members)}), applied as the mirror names them:")
        groups = set(Group.objects.values_list("name", flat=True))
        for slug, m in members:
            if m.user:
                note = (
                    "an EXISTING account here: gets this role now"
                    if m.user in existing
                    else "a new inactive account"
                )
                lines.append(f"  {slug}: user {m.user} becomes {m.role} ({note})")
            else:
                note = "an existing group" if m.group in groups else "a new group"
                lines.append(f"  {slug}: group {m.group} becomes {m.role} ({note})")
    matched = sorted(existing & set(plan.authors))
    lines.append(
        f"Revisions: {plan.revisions}, by {len(plan.authors)} author(s)"
        + (
            f"; these match existing accounts by username and are recorded as theirs: "
            f"{', '.join(matched)}."
            if matched
            else "."
        )
    )
    if plan.keep_verified:
        lines.append("Verification marks (verified_by): KEPT as the mirror writes them.")
    else:
        lines.append(
            "Verification marks (verified_by): dropped (the mirror's are only names; pass "
            "--keep-verified to keep them)."
        )
    guests = settings.CAIRN_GUEST_GROUPS
    lines.append(
        "Accounts the restore creates: inactive, without a password"
        + (f", in the guest group {guests[0]!r}" if guests else "")
        + "; an SSO sign-in re-syncs them."
    )
    narrowed = ApiToken.objects.filter(narrowed=True, revoked_at__isnull=True).count()
    if narrowed:
        lines.append(
            f"API tokens narrowed to projects: {narrowed}; each is re-pointed to the restored "
            "projects of the same slugs, or revoked when none of them comes back."
        )
    return lines
