"""The Django admin for staff. Reads are scoped by the selectors; writes go through the services,
so an edit here is a revision like any other."""

from knowledge.admin import dashboard, entries, projects, topics  # noqa: F401  (register the admins)
from knowledge.admin.entries import EntryAdmin
from knowledge.admin.projects import ProjectAdmin
from knowledge.admin.topics import SourceAdmin, SubtopicAdmin

__all__ = ["EntryAdmin", "ProjectAdmin", "SourceAdmin", "SubtopicAdmin"]

import knowledge.admin.tokens  # noqa: F401  (registers the API token admin)
