"""Reading OIDC providers from the environment: both forms, and errors that say what to fix."""

import json

import pytest

from memory_site.oidc_config import OIDCConfigError, allauth_apps, providers_from_env

KC = {
    "id": "keycloak",
    "name": "Acme SSO",
    "issuer": "https://sso.example.com/realms/acme/",
    "client_id": "cairn",
    "secret": "s",
}


def test_json_list_becomes_allauth_apps():
    google = {**KC, "id": "google", "name": "Google", "issuer": "https://accounts.google.com"}
    providers = providers_from_env({"CAIRN_OIDC_PROVIDERS": json.dumps([KC, google])})
    apps = allauth_apps(providers)
    assert [a["provider_id"] for a in apps] == ["keycloak", "google"]
    assert apps[0]["settings"]["server_url"] == "https://sso.example.com/realms/acme"
    assert apps[0]["client_id"] == "cairn" and apps[0]["name"] == "Acme SSO"


def test_numbered_variables():
    env = {
        "CAIRN_OIDC_1_ID": "kc",
        "CAIRN_OIDC_1_NAME": "Keycloak",
        "CAIRN_OIDC_1_ISSUER": "https://kc.example",
        "CAIRN_OIDC_1_CLIENT_ID": "cairn",
        "CAIRN_OIDC_1_SECRET": "x",
        "CAIRN_OIDC_2_ID": "okta",
        "CAIRN_OIDC_2_NAME": "Okta",
        "CAIRN_OIDC_2_ISSUER": "https://acme.okta.com",
        "CAIRN_OIDC_2_CLIENT_ID": "abc",
    }
    assert [p["id"] for p in providers_from_env(env)] == ["kc", "okta"]


def test_nothing_configured_means_no_providers():
    assert providers_from_env({}) == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[{", "not valid JSON"),
        ('"x"', "JSON list of objects"),
        (json.dumps([{**KC, "issuer": ""}]), "lacks issuer"),
        (json.dumps([{**KC, "id": "Key Cloak"}]), "callback URL"),
        (json.dumps([KC, KC]), "share the id"),
    ],
)
def test_mistakes_are_named(raw, message):
    with pytest.raises(OIDCConfigError, match=message):
        providers_from_env({"CAIRN_OIDC_PROVIDERS": raw})
