"""An admin site with the history mixin on the site's own EntryAdmin, wired as the merge does:
`class EntryAdmin(RevisionAdminMixin, ScopedAdminMixin, SimpleHistoryAdmin)`."""

from django.contrib import admin
from django.urls import path

from history.admin import RevisionAdminMixin
from knowledge import admin as knowledge_admin
from knowledge.models import Entry

site = admin.AdminSite(name="admin")

if issubclass(knowledge_admin.EntryAdmin, RevisionAdminMixin):
    EntryAdmin = knowledge_admin.EntryAdmin
else:  # before the merge adds the mixin to knowledge/admin.py

    class EntryAdmin(RevisionAdminMixin, knowledge_admin.EntryAdmin):
        pass


site.register(Entry, EntryAdmin)
urlpatterns = [path("admin/", site.urls)]
