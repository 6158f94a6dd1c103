"""manage.py grant <user|group> <project> <role>  (or --revoke): project membership."""

from __future__ import annotations

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.models import Role
from knowledge.selectors.users import principal_named
from knowledge.services import membership_grant, membership_revoke


class Command(DataCommand):
    help = (
        "Give a user or group a role in a project: grant alice customer-x editor, "
        "grant group:support customer-x viewer, grant --revoke alice customer-x."
    )

    def add_arguments(self, parser):
        parser.add_argument("principal", help="username, email, group name, user:X or group:X")
        parser.add_argument("project", help="project slug, name or id")
        parser.add_argument("role", nargs="?", choices=Role.values)
        parser.add_argument("--revoke", action="store_true", help="remove the membership")
        self.add_acting_argument(
            parser,
            "--by",
            help="act as this user (a maintainer of the project); default: the first superuser",
        )

    def agent_label(self, user, options):
        return f"human:{user.get_username()} via manage.py"

    def handle(self, *args, principal, project, role, revoke, **options):
        if not revoke and role is None:
            raise CommandError(f"Name a role: one of {', '.join(Role.values)} (or use --revoke).")
        actor = self.actor
        try:
            user, group = principal_named(principal)
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
