"""A URLconf with an admin site holding only the token admin (knowledge/admin.py, which imports
knowledge.admin_tokens for the real site, is the lead's)."""

from django.contrib.admin import AdminSite
from django.urls import path

from knowledge.admin_tokens import ApiTokenAdmin
from knowledge.models import ApiToken

site = AdminSite(name="token_admin_test")
site.register(ApiToken, ApiTokenAdmin)

urlpatterns = [path("admin/", site.urls)]
