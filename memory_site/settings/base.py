"""The Django site: the environment file, the secret key, TLS, apps, middleware, templates,
passwords and static files."""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from memory_site import embedded

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = embedded.VAR_DIR
# Django's debug pages, which show settings and code on an error (team mode refuses them).
DEBUG = env.bool("DJANGO_DEBUG", default=False)
# The embedded default is for one machine; a team deployment sets its own key.
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
# Team mode (your own database) must set a real key: a placeholder signs sessions anyone can forge.
TEAM_MODE = bool(env("DATABASE_URL", default=""))
_PLACEHOLDER_KEYS = {"change-me", "change-me-in-docker-env", "changeme", "secret", "insecure"}
if TEAM_MODE and (
    not SECRET_KEY or SECRET_KEY.strip().lower() in _PLACEHOLDER_KEYS or len(SECRET_KEY) < 32
):
    raise ImproperlyConfigured(
        "Team mode (DATABASE_URL is set) needs DJANGO_SECRET_KEY: at least 32 random characters, "
        'not a placeholder. Generate one with: python -c "import secrets; '
        'print(secrets.token_urlsafe(50))"'
    )
# --- Team mode serves people over a network: no debug pages (they show settings and code) ---
if TEAM_MODE and DEBUG:
    raise ImproperlyConfigured(
        "Team mode (DATABASE_URL is set) refuses DJANGO_DEBUG=true: debug pages show settings, "
        "code and queries to anyone who triggers an error. Set DJANGO_DEBUG=false (or unset it); "
        "debug on your own machine in embedded mode, without DATABASE_URL."
    )

if not SECRET_KEY:
    _key_file = VAR_DIR / "secret_key"
    if not _key_file.exists():
        from django.core.management.utils import get_random_secret_key

        embedded.write_private(_key_file, get_random_secret_key())
    SECRET_KEY = _key_file.read_text().strip()

# Host names the site answers to, and the origins (https://cairn.example.com) allowed to post forms.
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
# Behind TLS: secure cookies, HSTS, and the proxy's X-Forwarded-Proto (only behind a proxy that
# sets it: otherwise clients could claim https). Team mode sends cookies over https only unless
# told otherwise (DJANGO_SESSION_COOKIE_SECURE=false, for a plain-http trial).
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=TEAM_MODE)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=SESSION_COOKIE_SECURE)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=False)
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The site's own address: /mcp accepts its origin, and MCP's auth metadata names it as issuer.
SITE_URL = env("CAIRN_SITE_URL", default="http://127.0.0.1:8000")

INSTALLED_APPS = [
    # The admin's theme (django-unfold): before django.contrib.admin, whose templates it
    # replaces; its filters and its simple_history templates before the apps they dress.
    "unfold",
    "unfold.contrib.filters",
    "unfold.contrib.simple_history",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "pgvector.django",
    "simple_history",
    "ninja",
    "knowledge",
    "history",
    "mcp_api",
    "memory_site",
    "ops",  # timings, metrics, logs: imports no other Cairn app
    "web",
    "django_htmx",
    # Team sign-in: django-allauth's openid_connect provider (settings/access.py)
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
]

MIDDLEWARE = [
    "ops.middleware.OperationsMiddleware",  # request id; REST timings (first)
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",  # SECURE_CSP (settings/access.py)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "memory_site.actors.ActorMiddleware",  # request.actor (lazy: no query until asked)
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "memory_site.urls"
ASGI_APPLICATION = "memory_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "admin:login"

LANGUAGE_CODE = "en-us"
# The time zone dates are shown in (they are stored in UTC).
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on a missing root
# Static files are served by WhiteNoise straight from the apps: no collectstatic step needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
