"""`manage.py revoke_access <username>`: deactivate a user, revoke all of their tokens, end their
sessions, disable their password sign-in and clear their staff and superuser flags."""

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.selectors.users import user_by_name
from knowledge.services import user_access_revoke


class Command(DataCommand):
    help = (
        "Deactivate a user: revoke every API token, end all their signed-in sessions, disable "
        "their password sign-in and clear their staff and superuser flags; single sign-on "
        "refuses them too (for someone who left, or lost a group in the identity provider)."
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
        named = {"is_staff": "staff", "is_superuser": "a superuser"}
        lost = " or ".join(named[flag] for flag in done.flags_cleared)
        flags = f" and no longer {lost}" if lost else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"Revoked {done.tokens} token(s) and ended {done.sessions} session(s) of {user}; "
                f"{password}. The account is deactivated{flags}: single sign-on refuses it "
                "too. To let them back in, tick 'active' on their account in the admin (and "
                "grant staff again if they need it)."
            )
        )
