"""Read the OpenID Connect providers from the environment (imported by settings: no Django).

Either one JSON list in CAIRN_OIDC_PROVIDERS:
    [{"id": "keycloak", "name": "Company SSO", "issuer": "https://…/realms/acme",
      "client_id": "cairn", "secret": "…"}]
or numbered variables CAIRN_OIDC_1_ID, CAIRN_OIDC_1_NAME, CAIRN_OIDC_1_ISSUER,
CAIRN_OIDC_1_CLIENT_ID, CAIRN_OIDC_1_SECRET (then _2_, …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

REQUIRED = ("id", "name", "issuer", "client_id")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,49}$")


class OIDCConfigError(ValueError):
    pass


def _numbered(environ: Mapping[str, str]) -> list[dict]:
    providers = []
    n = 1
    while any(k.startswith(f"CAIRN_OIDC_{n}_") for k in environ):
        prefix = f"CAIRN_OIDC_{n}_"
        providers.append(
            {
                key.lower(): environ.get(prefix + key, "")
                for key in ("ID", "NAME", "ISSUER", "CLIENT_ID", "SECRET")
            }
        )
        n += 1
    return providers


def providers_from_env(environ: Mapping[str, str]) -> list[dict]:
    """The configured providers, validated, in the order given."""
    raw = environ.get("CAIRN_OIDC_PROVIDERS", "").strip()
    if raw:
        try:
            providers = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise OIDCConfigError(f"CAIRN_OIDC_PROVIDERS is not valid JSON: {exc}") from exc
        if isinstance(providers, dict):
            providers = [providers]
        if not isinstance(providers, list) or not all(isinstance(p, dict) for p in providers):
            raise OIDCConfigError("CAIRN_OIDC_PROVIDERS must be a JSON list of objects.")
    else:
        providers = _numbered(environ)
    seen: set[str] = set()
    for i, p in enumerate(providers, 1):
        p.setdefault("id", "sso" if len(providers) == 1 else "")
        missing = [k for k in REQUIRED if not str(p.get(k) or "").strip()]
        if missing:
            raise OIDCConfigError(
                f"OIDC provider #{i} lacks {', '.join(missing)}; each needs id, name, issuer "
                "(e.g. https://sso.example.com/realms/acme), client_id and secret."
            )
        if not ID_RE.match(p["id"]):
            raise OIDCConfigError(
                f"OIDC provider id {p['id']!r} must be lowercase letters, digits, - or _; "
                "it becomes part of the callback URL."
            )
        if p["id"] in seen:
            raise OIDCConfigError(f"Two OIDC providers share the id {p['id']!r}.")
        seen.add(p["id"])
    return providers


def allauth_apps(providers: list[dict]) -> list[dict]:
    """SOCIALACCOUNT_PROVIDERS["openid_connect"]["APPS"] entries for allauth."""
    return [
        {
            "provider_id": p["id"],
            "name": p["name"],
            "client_id": p["client_id"],
            "secret": p.get("secret", ""),
            "settings": {
                "server_url": p["issuer"].rstrip("/"),
                **(
                    {"token_auth_method": p["token_auth_method"]}
                    if p.get("token_auth_method")
                    else {}
                ),
            },
        }
        for p in providers
    ]


def issuer_origins(providers: list[dict]) -> list[str]:
    """The providers' origins (scheme://host:port), for the CSP's form-action: an SSO sign-in
    is a form post that redirects to the provider, and browsers hold that redirect to it."""
    origins = set()
    for p in providers:
        parts = urlsplit(p["issuer"])
        origins.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(origins)
