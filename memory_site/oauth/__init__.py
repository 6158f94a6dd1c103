"""Cairn as the authorization server of its own /mcp (MCP authorization, 2025-11-25).

An agent's sign-in is the team's sign-in: a client registers itself (RFC 7591) or is named by
its metadata document's URL, sends the person to /oauth/authorize (Cairn's sign-in, then a
consent that picks projects and read or write), and exchanges the code (PKCE S256) at
/oauth/token for an ApiToken bound to /mcp (RFC 8707) and a rotating refresh token.

    endpoints.py   the token, registration and revocation endpoints and the server metadata
                   (RFC 8414, and its OpenID alias): the mcp SDK's handlers behind Cairn's
                   bounds, rate limits and wording (Starlette; memory_site/asgi.py routes them)
    provider.py    the SDK's provider interface, on knowledge's selectors and services
    clients.py     what a client may register, and how a client id is looked up (documents.py
                   fetches metadata documents, bounded and on public addresses only)
    views.py       /oauth/authorize: sign-in (the pages' own, SSO or password) and consent
    limits.py      per-address request limits

/mcp's side (its metadata document, its 401 challenge, the resource check) is mcp_api's
(mcp_api/protected_resource.py). Every token is checked in one place: token_authenticate.
"""
