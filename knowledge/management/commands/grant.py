"""manage.py grant <user|group> <project> <role>  (or --revoke): project membership."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, NotFound, ValidationFailed
from knowledge.models import Role
from knowledge.services import membership_grant, membership_revoke


def principal_lookup(name: str) -> tuple[object | None, Group | None]:
    """Resolve `user:NAME`, `group:NAME` or a bare username / email / group name."""
    kind, sep, rest = name.partition(":")
    if sep and kind in ("user", "group"):
        name = rest
    else:
        kind = ""
    User = get_user_model()
    user = None
    if kind in ("", "user"):
        user = (
            User.objects.filter(username=name).first()
            or User.objects.filter(email__iexact=name).first()
        )
    group = Group.objects.filter(name=name).first() if kind in ("", "group") else None
    if user is not None and group is not None:
        raise ValidationFailed(
            f"{name!r} is both a user and a group; write user:{name} or group:{name}."
        )
    if user is None and group is None:
        what = {"user": "user", "group": "group"}.get(kind, "user or group")
        raise NotFound(
            f"No {what} {name!r}. Users appear after their first sign-in (or createsuperuser); "
            "groups come from the identity provider's groups claim or the admin."
        )
    return user, group


class Command(BaseCommand):
    help = (
        "Give a user or group a role in a project: grant alice customer-x editor, "
        "grant group:support customer-x viewer, grant --revoke alice customer-x."
    )

    def add_arguments(self, parser):
        parser.add_argument("principal", help="username, email, group name, user:X or group:X")
        parser.add_argument("project", help="project slug, name or id")
        parser.add_argument("role", nargs="?", choices=Role.values)
        parser.add_argument("--revoke", action="store_true", help="remove the membership")
        parser.add_argument(
            "--by",
            help="act as this user (a maintainer of the project); default: the first superuser",
        )

    def handle(self, *args, principal, project, role, revoke, by, **options):
        User = get_user_model()
        if by:
            acting = User.objects.filter(username=by, is_active=True).first()
            if acting is None:
                raise CommandError(f"No active user {by!r} to act as.")
        else:
            acting = User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
            if acting is None:
                raise CommandError(
                    "No active superuser to act as. Create one with `manage.py createadmin` "
                    "(or createsuperuser), or pass --by <maintainer>."
                )
        if not revoke and role is None:
            raise CommandError(f"Name a role: one of {', '.join(Role.values)} (or use --revoke).")
        actor = Actor.for_user(acting, agent=f"human:{acting.get_username()} via manage.py")
        try:
            user, group = principal_lookup(principal)
            if revoke:
                membership_revoke(actor=actor, project=project, user=user, group=group)
                self.stdout.write(f"Revoked {user or group}'s membership of {project}.")
            else:
                m = membership_grant(
                    actor=actor, project=project, role=role, user=user, group=group
                )
                self.stdout.write(f"{m.user or m.group} is now {m.role} of {m.project.slug}.")
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
