"""Which authorization server for MCP authorization (issue 42): each candidate run by the
official MCP Python SDK client (OAuthClientProvider: 401 → metadata → registration → a signed-in
person's consent → code + PKCE → token), then a checklist of what the MCP specification
(2025-11-25) and the issue ask, by plain HTTP.

    bench/oauth_candidates.py dot       django-oauth-toolkit, configured for MCP as its docs say
    bench/oauth_candidates.py allauth   django-allauth's OpenID Connect identity provider
    bench/oauth_candidates.py cairn --url http://127.0.0.1:8000 --user admin --password …
                                        Cairn itself (a running `make run`)

dot and allauth run in a throwaway Django project (sqlite in a temporary directory, uvicorn on a
free port) beside a stand-in /mcp that answers 401 until the candidate's own token table knows
the bearer. django-oauth-toolkit is not a Cairn dependency: install it somewhere else first,
`pip install --target /tmp/dot django-oauth-toolkit==3.4.1 jwcrypto`, and pass --dot-path.
The table and JSON (bench/results/) are docs/developers/mcp-authorization.md's measurements.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import re
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from _common import free_port, print_table, write_json

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CALLBACK = "http://127.0.0.1:9/cb"


def _throwaway_project(candidate: str, base: str, dot_path: str | None) -> None:
    """Configure Django for `candidate` in this process, with a stand-in /mcp."""
    import django
    from django.conf import settings

    if dot_path:
        sys.path.insert(0, dot_path)
    apps = [
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "django.contrib.sessions",
        "django.contrib.messages",
        "django.contrib.staticfiles",
    ]
    extra: dict = {}
    if candidate == "dot":
        apps.append("oauth2_provider")
        extra["OAUTH2_PROVIDER"] = {
            "DCR_ENABLED": True,
            "CIMD_ENABLED": True,
            "PKCE_REQUIRED": True,
            "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
            "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
            "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
            "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
            "REFRESH_TOKEN_REUSE_PROTECTION": True,
            "ALLOW_LOCALHOST_LOOPBACK": True,
            "SCOPES": {"read": "Read", "write": "Write"},
        }
    else:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        apps += ["allauth", "allauth.account", "allauth.idp.oidc"]
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        extra |= {
            "IDP_OIDC_PRIVATE_KEY": pem,
            "IDP_OIDC_DCR_ENABLED": True,
            "IDP_OIDC_DCR_REQUIRES_INITIAL_ACCESS_TOKEN": False,
            "IDP_OIDC_CIMD_ENABLED": True,
            "IDP_OIDC_RATE_LIMITS": False,
        }
    middleware = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.common.CommonMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
    ]
    if candidate == "allauth":
        middleware.append("allauth.account.middleware.AccountMiddleware")
    settings.configure(
        SECRET_KEY="bench-" * 10,
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        USE_TZ=True,
        INSTALLED_APPS=apps,
        MIDDLEWARE=middleware,
        STATIC_URL="static/",
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": str(Path(tempfile.mkdtemp()) / "db.sqlite3"),
            }
        },
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                    ]
                },
            }
        ],
        AUTHENTICATION_BACKENDS=["django.contrib.auth.backends.ModelBackend"],
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        **extra,
    )
    django.setup()
    from django.http import HttpResponse, JsonResponse
    from django.urls import include, path
    from django.views.decorators.csrf import csrf_exempt

    def prm(request):
        scopes = ["read", "write"] if candidate == "dot" else ["openid"]
        return JsonResponse(
            {"resource": f"{base}/mcp", "authorization_servers": [base], "scopes_supported": scopes}
        )

    @csrf_exempt
    def mcp(request):
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if bearer and _known(candidate, bearer, f"{base}/mcp"):
            return JsonResponse({"ok": True})
        answer = HttpResponse(status=401)
        answer["WWW-Authenticate"] = (
            f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
        )
        return answer

    routes = [path(".well-known/oauth-protected-resource/mcp", prm), path("mcp", mcp)]
    routes.append(
        path("", include("oauth2_provider.urls" if candidate == "dot" else "allauth.idp.urls"))
    )
    sys.modules[__name__].urlpatterns = routes


def _known(candidate: str, bearer: str, url: str) -> bool:
    """The candidate's own token table knows this bearer (the second table the issue forbids)."""
    if candidate == "dot":
        from oauth2_provider.oauth2_validators import OAuth2Validator
        from oauthlib.common import Request

        request = Request(url, headers={"Authorization": f"Bearer {bearer}"})
        return OAuth2Validator().validate_bearer_token(bearer, [], request)
    from allauth.idp.oidc.adapter import get_adapter
    from allauth.idp.oidc.models import Token

    return Token.objects.filter(hash=get_adapter().hash_token(bearer)).exists()


def _serve_throwaway() -> str:
    import uvicorn
    from django.contrib.auth.models import User
    from django.core.asgi import get_asgi_application
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    User.objects.create_user("probe", password="pw-probe-1")
    port = BASE_PORT
    server = uvicorn.Server(uvicorn.Config(get_asgi_application(), port=port, log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


BASE_PORT = 0


def _session(user: str):
    """Cookies of a signed-in session in a throwaway project (its own session store)."""
    import httpx
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    person = User.objects.get(username=user)
    session = SessionStore()
    session.update(
        {
            SESSION_KEY: str(person.pk),
            HASH_SESSION_KEY: person.get_session_auth_hash(),
            BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
        }
    )
    session.save()
    cookies = httpx.Cookies()
    cookies.set("sessionid", session.session_key)
    return cookies


def _signed_in(base: str, user: str, password: str):
    """Cookies of a session signed in through Cairn's own sign-in page."""
    import httpx

    browser = httpx.Client(base_url=base, timeout=10)
    form = browser.get("/accounts/login/")
    browser.post(
        "/accounts/login/",
        data={
            "login": user,
            "password": password,
            "csrfmiddlewaretoken": CSRF.search(form.text).group(1),
        },
        headers={"Referer": f"{base}/accounts/login/"},
    )
    return browser.cookies


CANDIDATE = ""


async def _consent(url: str, cookies, answer: dict, steps: list) -> None:
    """Submit the candidate's consent form as a person would (allow, read and write)."""
    import httpx2

    async with httpx2.AsyncClient(cookies=dict(cookies), timeout=10) as browser:
        page = await browser.get(url)
        steps.append(("consent page", page.status_code))
        html = page.text
        fields = dict(re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', html))
        fields.pop("scopes", None)
        fields |= {
            "dot": {"allow": "Authorize", "scope": "read write"},
            "allauth": {"action": "grant", "scopes": "openid"},
            "cairn": {"access": "write", "reach": "all", "decision": "allow"},
        }[CANDIDATE]
        action = re.search(r'<form[^>]*action="([^"]+)"', html)
        target = action.group(1) if action and CANDIDATE != "cairn" else url
        target = (
            target
            if target.startswith("http")
            else urlsplit(url)._replace(path=target, query="").geturl()
        )
        page = await browser.post(target, data=fields, headers={"Referer": url})
        location = page.headers.get("location", "")
        steps.append(("authorize answer", page.status_code))
        answer.update({k: v[0] for k, v in parse_qs(urlsplit(location).query).items()})


class _Memory:
    tokens = client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def _sdk_flow(base: str, cookies):
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    steps, answer, storage = [], {}, _Memory()

    class Trace(httpx2.AsyncBaseTransport):
        def __init__(self):
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            response = await self.inner.handle_async_request(request)
            steps.append((request.method, request.url.path, response.status_code))
            return response

    async def callback():
        return AuthorizationCodeResult(
            code=answer.get("code", ""), state=answer.get("state"), iss=answer.get("iss")
        )

    metadata = OAuthClientMetadata(
        client_name="bench",
        redirect_uris=[CALLBACK],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
    )
    auth = OAuthClientProvider(
        f"{base}/mcp",
        metadata,
        storage,
        callback_handler=callback,
        redirect_handler=lambda url: _consent(url, cookies, answer, steps),
    )
    started = time.perf_counter()
    try:
        async with httpx2.AsyncClient(auth=auth, transport=Trace(), timeout=15) as client:
            response = await client.post(
                f"{base}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
            )
        ok, error = response.status_code == 200, None
    except Exception as exc:
        ok, error = False, f"{type(exc).__name__}: {exc}"[:300]
    return ok, error, time.perf_counter() - started, steps, storage


def _checklist(base: str, cookies, storage) -> dict[str, bool]:
    import httpx

    plain, checks = httpx.Client(base_url=base, timeout=10), {}
    server = plain.get("/.well-known/oauth-authorization-server")
    openid = plain.get("/.well-known/openid-configuration")
    checks["RFC 8414 metadata"] = server.status_code == 200
    checks["OpenID discovery alias"] = openid.status_code == 200
    meta = server.json() if server.status_code == 200 else openid.json()
    checks["S256 only advertised"] = meta.get("code_challenge_methods_supported") == ["S256"]
    checks["client ID metadata documents advertised"] = bool(
        meta.get("client_id_metadata_document_supported")
    )
    registered = plain.post(
        meta["registration_endpoint"],
        json={
            "client_name": "x",
            "redirect_uris": ["http://127.0.0.1:5000/cb"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        },
    )
    checks["open dynamic registration"] = registered.status_code in (200, 201)
    client_id = registered.json().get("client_id")
    browser = httpx.Client(cookies=cookies, timeout=10)
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def refused(**params) -> bool:
        query = {
            "response_type": "code",
            "client_id": client_id,
            "state": "s",
            "redirect_uri": "http://127.0.0.1:5000/cb",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": meta.get("scopes_supported", ["read"])[0],
        }
        query = {k: v for k, v in (query | params).items() if v is not None}
        page = browser.get(meta["authorization_endpoint"] + "?" + urlencode(query))
        text = re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", page.text))
        return (
            page.status_code >= 400
            or "error=" in page.headers.get("location", "")
            or (" Error " in text[:300])
        )

    checks["plain PKCE refused at /authorize"] = refused(
        code_challenge=verifier, code_challenge_method="plain"
    )
    checks["implicit refused"] = refused(response_type="token")
    checks["unregistered redirect refused"] = refused(redirect_uri="https://evil.example/cb")
    checks["loopback on another port accepted"] = not refused(
        redirect_uri="http://127.0.0.1:5999/cb"
    )
    checks["another server's resource refused"] = refused(resource="https://other.example/mcp")
    tokens = storage.tokens
    if tokens and tokens.refresh_token and storage.client:
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "client_id": storage.client.client_id,
        }
        first = plain.post(meta["token_endpoint"], data=form)
        checks["refresh rotates"] = first.status_code == 200 and (
            first.json().get("refresh_token") not in (None, tokens.refresh_token)
        )
        checks["a replayed refresh token is refused"] = (
            plain.post(meta["token_endpoint"], data=form).status_code >= 400
        )
        if first.status_code == 200:
            after = plain.post(
                meta["token_endpoint"], data=form | {"refresh_token": first.json()["refresh_token"]}
            )
            checks["a replay ends the connection"] = after.status_code >= 400
    return checks


def main() -> None:
    global BASE_PORT, CANDIDATE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidate", choices=["dot", "allauth", "cairn"])
    parser.add_argument("--url", help="cairn: a running Cairn, e.g. http://127.0.0.1:8000")
    parser.add_argument("--user", default="admin")
    parser.add_argument("--password", default="")
    parser.add_argument("--dot-path", help="dot: where django-oauth-toolkit was pip-installed")
    args = parser.parse_args()
    CANDIDATE = args.candidate
    if args.candidate == "cairn":
        base = args.url.rstrip("/")
        cookies = _signed_in(base, args.user, args.password)
    else:
        BASE_PORT = free_port()
        _throwaway_project(args.candidate, f"http://127.0.0.1:{BASE_PORT}", args.dot_path)
        base = _serve_throwaway()
        cookies = _session("probe")
    ok, error, seconds, steps, storage = asyncio.run(_sdk_flow(base, cookies))
    checks = _checklist(base, cookies, storage)
    print(
        f"{args.candidate}: the SDK client's flow {'completed' if ok else 'failed'} "
        f"in {seconds:.2f} s{'' if ok else ': ' + str(error)}"
    )
    print_table(["step", "answer"], [[" ".join(map(str, s[:-1])), s[-1]] for s in steps])
    print()
    print_table(
        ["check", "holds"], [[name, "yes" if held else "NO"] for name, held in checks.items()]
    )
    write_json(
        f"oauth_candidates-{args.candidate}",
        {
            "flow_completed": ok,
            "error": error,
            "seconds": seconds,
            "steps": steps,
            "checks": checks,
            "held": sum(checks.values()),
            "of": len(checks),
        },
    )


if __name__ == "__main__":
    main()
