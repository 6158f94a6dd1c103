"""The base for commands that work on the memory: who acts, and one timing per run."""

from __future__ import annotations

from django.core.management.base import CommandError

from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.selectors.users import first_superuser, user_by_name
from ops.commands import TimedCommand


class DataCommand(TimedCommand):
    """A command that reads or writes the memory as someone, timed as one `command` operation.

    `self.actor` is who acts. A command that names its user declares the option with
    `add_acting_argument` (each command keeps the name it has always had: `--by`, `--user`);
    without a value it acts as the first active superuser. A command without that option acts
    as the system, on behalf of nobody in particular. `agent_label` is what its writes record
    as generated_by.
    """

    acting_option: str | None = None
    acting_dest: str | None = None
    actor: Actor

    def add_acting_argument(self, parser, option: str, *, help: str, required: bool = False):
        self.acting_option = option
        self.acting_dest = parser.add_argument(option, required=required, help=help).dest

    def agent_label(self, user, options: dict) -> str:
        return ""

    def execute(self, *args, **options):
        # Settled before the clock starts: a run that cannot find its user did no work.
        self.actor = self.acting_actor(options)
        return super().execute(*args, **options)

    def acting_actor(self, options: dict) -> Actor:
        if self.acting_option is None:
            return Actor.system()
        name = options.get(self.acting_dest)
        if name:
            try:
                user = user_by_name(name)
            except NotFound as exc:
                raise CommandError(exc.message) from exc
            if not user.is_active:
                raise CommandError(
                    f"{name!r} is deactivated; pass {self.acting_option} with an active user."
                )
        else:
            user = first_superuser()
            if user is None:
                raise CommandError(
                    "No active superuser to act as. Create one with `manage.py createadmin` "
                    f"(or createsuperuser), or pass {self.acting_option} USER."
                )
        return Actor.for_user(user, agent=self.agent_label(user, options))
