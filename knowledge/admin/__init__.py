"""The Django admin for staff. Reads are scoped by the selectors; writes go through the services,
so an edit here is a revision like any other."""

from django.contrib import admin

from knowledge.admin import accounts, dashboard, entries, projects, topics  # noqa: F401  (register)
from knowledge.admin.entries import EntryAdmin
from knowledge.admin.projects import ProjectAdmin
from knowledge.admin.topics import SourceAdmin, SubtopicAdmin

__all__ = ["EntryAdmin", "ProjectAdmin", "SourceAdmin", "SubtopicAdmin"]

import knowledge.admin.oauth  # (registers the connected clients' admin)
import knowledge.admin.tokens  # noqa: F401  (registers the API token admin)
from knowledge.admin.site import dress

dress(admin.site)  # the theme's policy on every admin page
