"""Who is calling, behind a reverse proxy on the same host.

uvicorn replaces the connection's address with the client's from X-Forwarded-For when the proxy
is in FORWARDED_ALLOW_IPS (loopback by default), so REMOTE_ADDR is the client's then. What is
left to decide here: a request that carries forwarding headers came through a proxy, so it is
never "local"; and with CAIRN_BEHIND_PROXY the proxy's own entry in X-Forwarded-For names the
client when REMOTE_ADDR is still the proxy's loopback address (another ASGI server, or a proxy
uvicorn was told not to trust).
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def forwarded(request) -> bool:
    """Whether the request came through a proxy (configured, or naming a client of its own)."""
    return settings.CAIRN_BEHIND_PROXY or any(request.META.get(h) for h in FORWARDING_HEADERS)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def local_caller(request) -> bool:
    """A process on this host calling directly, not a client relayed by a proxy."""
    return not forwarded(request) and _loopback(request.META.get("REMOTE_ADDR", ""))


def client_address(request) -> str:
    """The client's address as the proxy saw it when one is configured, else REMOTE_ADDR.

    Only the last X-Forwarded-For entry counts: the one the proxy appended. Earlier entries are
    whatever the client sent, and keying on them would let it pick a fresh address per try.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    if settings.CAIRN_BEHIND_PROXY and (not remote or _loopback(remote)):
        last = request.META.get("HTTP_X_FORWARDED_FOR", "").rpartition(",")[2].strip()
        if last:
            return last
    return remote
