"""Who gets in and what browsers may do: team sign-in through OpenID Connect (django-allauth),
groups and guests, password logins, and the security headers every page sends."""

from django.utils.csp import CSP

from memory_site.oidc_config import allauth_apps, issuer_origins, providers_from_env
from memory_site.settings.base import env

# --- Team sign-in: OpenID Connect and access control -------------------------------------------
# django-allauth's openid_connect provider, one app per configured issuer
# (memory_site/oidc_config.py); its apps and middleware are in settings/base.py.
AUTHENTICATION_BACKENDS = ["memory_site.sso.backends.CairnBackend"]
# The OpenID Connect issuers people sign in with: CAIRN_OIDC_PROVIDERS, a JSON list of
# {id, name, issuer, client_id, secret}, or numbered CAIRN_OIDC_<n>_ID, _NAME, _ISSUER, … variables.
CAIRN_OIDC_PROVIDERS = providers_from_env(env.ENVIRON)
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {"APPS": allauth_apps(CAIRN_OIDC_PROVIDERS), "OAUTH_PKCE_ENABLED": True}
}
ACCOUNT_ADAPTER = "memory_site.sso.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "memory_site.sso.adapters.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
# password1 also keeps the password field on the login form (signup itself is closed).
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_EMAIL_VERIFICATION = "none"  # the identity provider vouches for the address
SOCIALACCOUNT_AUTO_SIGNUP = True  # first sign-in provisions the user
SOCIALACCOUNT_LOGIN_ON_GET = False  # a login starts with a POST (no CSRF-able GET)
SOCIALACCOUNT_STORE_TOKENS = False
# Let an SSO sign-in take over an existing account with the same (verified) email, e.g. the
# superuser made by createsuperuser when password login is off.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = env.bool("CAIRN_OIDC_LINK_BY_EMAIL", default=False)
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = SOCIALACCOUNT_EMAIL_AUTHENTICATION
LOGIN_REDIRECT_URL = "/"  # the pages for people (web/)
ACCOUNT_LOGOUT_REDIRECT_URL = "/accounts/login/"
# Lower-case email domains allowed to sign in through SSO (empty: any the provider vouches for).
CAIRN_OIDC_ALLOWED_DOMAINS = [
    d.lower().lstrip("@") for d in env.list("CAIRN_OIDC_ALLOWED_DOMAINS", default=[])
]
# The claim carrying group names (empty: groups are not synced), and the groups that grant
# admin access (staff) and every right (superuser).
CAIRN_OIDC_GROUPS_CLAIM = env("CAIRN_OIDC_GROUPS_CLAIM", default="groups")
# Compare Keycloak-style group paths in full (`org/admins`) instead of their last segment.
CAIRN_OIDC_GROUP_FULL_PATH = env.bool("CAIRN_OIDC_GROUP_FULL_PATH", default=False)
# Groups whose members may open the admin (staff), and groups whose members get every right
# (superuser): set and cleared at every sign-in.
CAIRN_OIDC_STAFF_GROUPS = env.list("CAIRN_OIDC_STAFF_GROUPS", default=[])
CAIRN_OIDC_SUPERUSER_GROUPS = env.list("CAIRN_OIDC_SUPERUSER_GROUPS", default=[])
# Django groups whose members are outside the organisation: they read public projects and the
# ones they are members of, not internal ones.
CAIRN_GUEST_GROUPS = env.list("CAIRN_GUEST_GROUPS", default=[])
# Off: passwords no longer sign anyone in (admin form, /accounts/login/); SSO only.
CAIRN_PASSWORD_LOGIN = env.bool("CAIRN_PASSWORD_LOGIN", default=True)
# The admin's password form: this many failures per address and username, then 429 for the window.
CAIRN_LOGIN_MAX_FAILURES = env.int("CAIRN_LOGIN_MAX_FAILURES", default=5)
CAIRN_LOGIN_WINDOW_SECONDS = env.int("CAIRN_LOGIN_WINDOW_SECONDS", default=300)

# --- Browser safety: source URLs and security headers (issue 18) -------------------------------
# Source URLs are links on the pages: http, https and mailto only, plus the schemes listed here
# (e.g. "zotero,obsidian"); javascript:, data:, vbscript:, blob: and file: are never accepted.
CAIRN_SOURCE_URL_SCHEMES = env.list("CAIRN_SOURCE_URL_SCHEMES", default=[])
# Every page says: scripts, styles and images from this site only, nothing inline, no frames.
# SSO sign-in posts a form that redirects to the identity provider, and browsers check that
# redirect against form-action: the configured issuers' origins are allowed there too.
# (ContentSecurityPolicyMiddleware sits right after SecurityMiddleware, settings/base.py.)
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF, *issuer_origins(CAIRN_OIDC_PROVIDERS)],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
