from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from memory_site.login_limits import limit_failed_logins

admin.site.site_header = "Cairn"
admin.site.site_title = "Cairn"
admin.site.index_title = "Team memory"
admin.site.login = limit_failed_logins(admin.site.login)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]

# REST API (knowledge/api.py) is mounted below.
from memory_site.api import api  # noqa: E402

urlpatterns += [path("api/", api.urls)]

# Sign-in (allauth) URLs are mounted below.
urlpatterns += [path("accounts/", include("allauth.urls"))]
