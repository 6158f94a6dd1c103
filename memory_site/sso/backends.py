"""One authentication backend: allauth's, with local passwords behind a setting."""

from allauth.account.auth_backends import AuthenticationBackend
from django.conf import settings


class CairnBackend(AuthenticationBackend):
    """Password sign-in (admin form, /accounts/login/) unless CAIRN_PASSWORD_LOGIN is off.

    Single sign-on does not authenticate through this method (allauth logs the user in
    directly), so switching passwords off leaves SSO working.
    """

    def authenticate(self, request, **credentials):
        if not settings.CAIRN_PASSWORD_LOGIN:
            return None
        return super().authenticate(request, **credentials)
