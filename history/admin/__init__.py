"""History's admin: the git mirror's parked revisions, and what history adds to the knowledge
admin without the knowledge admin importing it (history builds on knowledge, never the other way):
the revision pages of entries and the mirror's state on the index."""

from django.contrib import admin

from history.admin.dashboard import add_mirror_state
from history.admin.parked import ParkedRevisionAdmin
from history.admin.revisions import RevisionAdminMixin, add_revisions, with_revisions
from history.models import ParkedRevision
from knowledge.models import Entry

admin.site.register(ParkedRevision, ParkedRevisionAdmin)
add_revisions(admin.site, Entry)
add_mirror_state(admin.site)

__all__ = ["ParkedRevisionAdmin", "RevisionAdminMixin", "with_revisions"]
