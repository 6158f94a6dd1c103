"""`manage.py revoke_access <username>`: revoke all of a user's tokens, end their sessions and
disable their password sign-in."""

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.selectors.users import user_by_name
from knowledge.services import user_access_revoke


class Command(DataCommand):
    help = (
        "Revoke every API token of a user, end all their signed-in sessions and disable their "
        "password sign-in (for someone who left, or lost a group in the identity provider)."
    )

    def add_arguments(self, parser):
        parser.add_argument("user", help="username")

    def handle(self, *args, user, **options):
        try:
            account = user_by_name(user)
            done = user_access_revoke(actor=self.actor, user=account)
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        password = (
            "their password sign-in is disabled"
            if done.password_disabled
            else "they had no password sign-in"
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Revoked {done.tokens} token(s) and ended {done.sessions} session(s) of {user}; "
                f"{password}. Single sign-on still lets them in while the identity provider "
                "does: remove them there, or untick 'active' on their account in the admin."
            )
        )
