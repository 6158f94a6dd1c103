"""The admin site's pages are sent with the admin's policy (settings.CAIRN_ADMIN_CSP): the
theme's Alpine.js needs 'unsafe-eval'; the rest of the site keeps the strict SECURE_CSP."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib import admin


def with_admin_csp(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response._csp_config = settings.CAIRN_ADMIN_CSP  # read by the CSP middleware
        # The theme marks some views SAMEORIGIN for its frames; Cairn shows its pages in none.
        response.headers["X-Frame-Options"] = "DENY"
        return response

    return wrapped


# Names as people say them, where a model's own verbose name reads otherwise.
SAID = {
    ("knowledge", "apitoken"): "API tokens",
    ("knowledge", "oauthgrant"): "Connected clients",
    ("knowledge", "oauthclient"): "OAuth clients",
}


def dress(site: admin.AdminSite) -> None:
    """Every view the site wraps (its own and each model admin's) and its sign-in pages get the
    admin's policy; the app lists (the theme's "All applications") say names as people do."""
    build = site._build_app_dict

    def build_app_dict(request, label=None):
        apps = build(request, label)
        for app in [apps] if label else (apps or {}).values():
            for model in (app or {}).get("models", []):
                said = SAID.get((app["app_label"], model["object_name"].lower()))
                model["name"] = said or model["name"]
        return apps

    site._build_app_dict = build_app_dict
    admin_view = site.admin_view

    def admin_view_with_csp(view, cacheable=False):
        return with_admin_csp(admin_view(view, cacheable))

    site.admin_view = admin_view_with_csp
    for name in ("login", "logout"):
        setattr(site, name, with_admin_csp(getattr(site, name)))
