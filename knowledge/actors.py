"""Who is acting: a user, the agent label they write under, and what their credential allows."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from django.contrib.auth.models import AnonymousUser


@dataclass(frozen=True)
class Actor:
    user: object  # a User (or AnonymousUser for nobody)
    agent: str = ""  # e.g. "agent:claude-code"; empty for a person at the admin
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({"read", "write"}))
    # A token narrowed to some projects; None means "all the user's projects".
    project_ids: frozenset[int] | None = None
    token_id: int | None = None
    # The run its writes belong to, when the client marked them (X-Cairn-Run) or a service
    # writes as one (an undo); else a token's writes are grouped by the gaps between them.
    run: str = ""

    @classmethod
    def for_user(cls, user, *, agent: str = "") -> Actor:
        return cls(user=user, agent=agent)

    @classmethod
    def system(cls) -> Actor:
        """For maintenance jobs that act on behalf of nobody in particular."""
        return cls(user=AnonymousUser(), agent="system:cairn")

    @property
    def can_write(self) -> bool:
        return "write" in self.scopes

    @property
    def label(self) -> str:
        """What generated_by records: the agent label, else human:<username>."""
        if self.agent:
            return self.agent
        username = getattr(self.user, "get_username", lambda: "")()
        return f"human:{username}" if username else "system:cairn"

    def in_run(self, run: str) -> Actor:
        """This actor writing as part of `run` (knowledge.runs.client_run cleans a client's)."""
        return replace(self, run=run)

    @property
    def db_user(self):
        """The user to store in created_by/history_user columns (None for anonymous)."""
        return self.user if getattr(self.user, "is_authenticated", False) else None
