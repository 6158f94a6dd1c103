"""An admin site with the history mixin on entries, for the admin view tests."""

from django.contrib import admin
from django.urls import path
from simple_history.admin import SimpleHistoryAdmin

from history.admin import RevisionAdminMixin
from knowledge.models import Entry

site = admin.AdminSite(name="admin")


class EntryAdmin(RevisionAdminMixin, SimpleHistoryAdmin):
    pass


site.register(Entry, EntryAdmin)
urlpatterns = [path("admin/", site.urls)]
