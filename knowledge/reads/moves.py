"""Moving entries between projects, said before it is done: who will read them afterwards, what
stays behind (their revisions from before the move keep their old project's access), and when
the move needs a maintainer of the project they leave (a confidential or restricted one: what
only its members could read becomes readable elsewhere)."""

from __future__ import annotations

from django.conf import settings

from knowledge.access import maintained_projects, writable_projects
from knowledge.actors import Actor
from knowledge.models import Membership, Project, Sensitivity
from knowledge.selectors.projects import MEMBERS_ONLY as HIDDEN

MEMBERS_NAMED = 8
MAX_TARGETS = 200


def audience(project: Project) -> str:
    """Who may read a project, in words: everyone signed in, every active user, or its
    members by name (the first few)."""
    if project.sensitivity == Sensitivity.PUBLIC:
        return "every signed-in user"
    if project.sensitivity == Sensitivity.INTERNAL:
        guests = settings.CAIRN_GUEST_GROUPS
        return "every active user" + (" except guests" if guests else "")
    rows = list(
        Membership.objects.filter(project=project)
        .select_related("user", "group")
        .order_by("user__username", "group__name")[: MEMBERS_NAMED + 1]
    )
    names = [m.user.get_username() if m.user_id else f"group:{m.group.name}" for m in rows]
    more = Membership.objects.filter(project=project).count() - MEMBERS_NAMED
    listed = ", ".join(names[:MEMBERS_NAMED]) + (f" and {more} more" if more > 0 else "")
    return f"its members only ({listed or 'none yet'}) and administrators"


def move_notice(actor: Actor, sources: list[Project], target: Project) -> str:
    """What moving entries from `sources` to `target` makes visible to whom, and whether the
    actor may (leaving a confidential or restricted project needs its maintainer)."""
    leaving = sorted({p.slug: p for p in sources if p.pk != target.pk}.values(), key=str)
    if not leaving:
        return f"They stay in {target.slug}: who may read them does not change."
    old = ", ".join(p.slug for p in leaving)
    text = (
        f"In {target.slug} they become readable by {audience(target)}; their revisions from "
        f"before the move stay readable only by those who may read {old}. Their sources move "
        "with them, and their old addresses keep leading to them."
    )
    hidden = [p for p in leaving if p.sensitivity in HIDDEN]
    if hidden:
        maintained = set(maintained_projects(actor).filter(pk__in=[p.pk for p in hidden]))
        lacking = [p.slug for p in hidden if p not in maintained]
        names = ", ".join(p.slug for p in hidden)
        text += f" {names} is members-only: moving out of it needs its maintainer"
        text += f" (you are not one of {', '.join(lacking)})." if lacking else " (you are one)."
    return text


def move_targets(actor: Actor) -> list[Project]:
    """The projects the actor may move entries into (writable), at most MAX_TARGETS."""
    return list(writable_projects(actor).order_by("slug")[:MAX_TARGETS])
