from django.contrib import admin
from django.urls import include, path

from memory_site.login_limits import limit_failed_logins

admin.site.site_header = "Cairn"
admin.site.site_title = "Cairn"
admin.site.index_title = "Team memory"
admin.site.login = limit_failed_logins(admin.site.login)

urlpatterns = [
    path("admin/", admin.site.urls),
]

# REST API (api/) is mounted below.
from api.site import api  # noqa: E402

urlpatterns += [path("api/", api.urls)]

# Sign-in (allauth) URLs are mounted below, and MCP authorization's sign-in and consent page.
urlpatterns += [
    path("accounts/", include("allauth.urls")),
    path("", include("memory_site.oauth.urls")),
]

# Operations: liveness, readiness and Prometheus metrics (memory_site/health.py).
from memory_site import health  # noqa: E402

urlpatterns += [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
]

# Pages for people (web/) last: they own `/`.
urlpatterns += [path("", include("web.urls"))]
