"""An admin site of its own with the site's EntryAdmin (revision history included), for tests that
need the admin's URLs without the rest of the site."""

from django.urls import path
from unfold.sites import UnfoldAdminSite

from history.admin import with_revisions
from knowledge.admin import EntryAdmin
from knowledge.models import Entry

site = UnfoldAdminSite(name="admin")  # the theme's templates need its context
site.register(Entry, with_revisions(EntryAdmin))
urlpatterns = [path("admin/", site.urls)]
