"""An admin site with the history mixin on the site's own EntryAdmin, as the merge will wire it:
`class EntryAdmin(RevisionAdminMixin, ScopedAdminMixin, SimpleHistoryAdmin)`."""

from django.contrib import admin
from django.urls import path

from history.admin import RevisionAdminMixin
from knowledge import admin as knowledge_admin
from knowledge.models import Entry

site = admin.AdminSite(name="admin")


class EntryAdmin(RevisionAdminMixin, knowledge_admin.EntryAdmin):
    pass


site.register(Entry, EntryAdmin)
urlpatterns = [path("admin/", site.urls)]
