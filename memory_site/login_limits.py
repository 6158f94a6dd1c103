"""A login rate limit for the admin's password form: after CAIRN_LOGIN_MAX_FAILURES failed
attempts for one address and username within CAIRN_LOGIN_WINDOW_SECONDS, further attempts get
429 until the window passes. (The site's /accounts/login/ has allauth's own limits.)

The address is the client's (memory_site.proxies.client_address): behind a proxy, the one the
proxy saw, so one guesser does not lock out everyone else behind the same proxy.

Counts live in Django's cache: per process with the default local-memory cache, shared when
CACHES points at Redis.
"""

from __future__ import annotations

import functools
import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse

from memory_site.proxies import client_address


def _key(request) -> str:
    who = (request.POST.get("username") or "").strip().lower()
    raw = f"{client_address(request)}|{who}"
    return "cairn-login-failures:" + hashlib.sha256(raw.encode()).hexdigest()


def limit_failed_logins(view):
    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)
        key, window = _key(request), settings.CAIRN_LOGIN_WINDOW_SECONDS
        if cache.get(key, 0) >= settings.CAIRN_LOGIN_MAX_FAILURES:
            minutes = max(1, window // 60)
            return HttpResponse(
                f"Too many failed sign-ins for this account from your address. Wait {minutes} "
                "minute(s) and try again, or ask an administrator to reset your password.",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
        response = view(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: the sign-in failed
            cache.add(key, 0, window)
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, window)
        else:
            cache.delete(key)
        return response

    return wrapper
