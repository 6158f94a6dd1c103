"""Create (or revoke) a personal API token from the command line."""

from datetime import timedelta

from django.core.management.base import CommandError
from django.utils import timezone

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.models import ApiToken, TokenScope
from knowledge.selectors.users import user_by_name
from knowledge.services import token_create, token_revoke


class Command(DataCommand):
    help = (
        "Create a personal API token for a user and print its secret once "
        "(or revoke one with --revoke ID, or list them with --list)."
    )

    def add_arguments(self, parser):
        parser.add_argument("user", help="username the token acts as")
        parser.add_argument("--name", default="", help="what the token is for, e.g. 'laptop'")
        parser.add_argument(
            "--scope", default=TokenScope.WRITE, choices=TokenScope.values, help="default: write"
        )
        parser.add_argument(
            "--project",
            action="append",
            default=[],
            dest="projects",
            help="restrict the token to this project (slug or name; repeat for more)",
        )
        parser.add_argument("--agent", default="", help="label recorded on writes, e.g. agent:cc")
        parser.add_argument("--days", type=int, default=None, help="expire after this many days")
        parser.add_argument("--revoke", type=int, metavar="ID", help="revoke this token")
        parser.add_argument("--list", action="store_true", help="list the user's tokens")

    def handle(self, *args, user, name, scope, projects, agent, days, revoke, list, **options):
        actor = self.actor  # the system: the token is the owner's, made by the operator
        try:
            owner = user_by_name(user)
            if list:
                for t in ApiToken.objects.filter(user=owner):
                    state = "revoked" if t.revoked_at else "active"
                    self.stdout.write(
                        f"{t.pk}\t{t.prefix}…\t{t.name}\t{t.scope}\t{state}\t{t.reach()}"
                    )
                return
            if revoke is not None:
                if not ApiToken.objects.filter(pk=revoke, user=owner).exists():
                    raise CommandError(f"{user} has no token {revoke}; see --list.")
                token = token_revoke(actor=actor, token_id=revoke)
                self.stdout.write(f"Revoked token {token.pk} ({token.prefix}…).")
                return
            if not name:
                raise CommandError("Give the token a --name, e.g. --name laptop.")
            expires = timezone.now() + timedelta(days=days) if days else None
            created = token_create(
                actor=actor,
                user=owner,
                name=name,
                scope=scope,
                projects=projects,
                agent_label=agent,
                expires_at=expires,
            )
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        self.stderr.write(
            f"Token {created.token.pk} '{created.token.name}' ({scope}) for {owner.username}. "
            "Store the secret now; it is not shown again:"
        )
        self.stdout.write(created.secret)
