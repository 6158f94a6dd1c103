"""The person's tokens: their personal tokens and the clients they connected through MCP
authorization, each with its projects, access and last use, and one button that ends it."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from knowledge.selectors.oauth import connected_clients, personal_tokens
from knowledge.services import oauth_client_disconnect, token_revoke
from web.views import person


@require_GET
@person
def tokens(request):
    actor = request.actor
    context = {"clients": connected_clients(actor), "tokens": personal_tokens(actor)}
    return render(request, "web/tokens.html", context)


@require_POST
@person
def disconnect(request, client_pk: int):
    ended = oauth_client_disconnect(actor=request.actor, client_pk=client_pk)
    if ended:
        messages.success(request, "Disconnected: its tokens are refused from its next request.")
    else:
        messages.error(request, "That client had no live connection of yours.")
    return redirect("web:tokens")


@require_POST
@person
def revoke(request, token_id: int):
    token = token_revoke(actor=request.actor, token_id=token_id)
    messages.success(request, f"Revoked the token {token.name!r}.")
    return redirect("web:tokens")
