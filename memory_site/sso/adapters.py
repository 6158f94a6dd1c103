"""allauth adapters: who may sign in, and what the identity provider's groups claim grants."""

from __future__ import annotations

import logging

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.shortcuts import render

log = logging.getLogger(__name__)


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request):
        # No self-service local accounts: an active account reads every internal project.
        # People arrive through single sign-on; operators use createsuperuser / createadmin.
        return False


def _claims(sociallogin) -> dict:
    """ID token claims overlaid with userinfo (IdPs put groups in one or the other)."""
    data = sociallogin.account.extra_data or {}
    if "userinfo" not in data and "id_token" not in data:
        return dict(data)
    return {**(data.get("id_token") or {}), **(data.get("userinfo") or {})}


def claimed_groups(claims: dict) -> set[str] | None:
    """The group names in the configured claim, or None when the claim is absent (an empty
    claim is an empty set). Keycloak's paths (/a/b) keep their leaf, or their full path
    (`a/b`) with CAIRN_OIDC_GROUP_FULL_PATH."""
    claim = settings.CAIRN_OIDC_GROUPS_CLAIM
    if not claim or claim not in claims:
        return None
    value = claims.get(claim) or []
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    names = set()
    for raw in value:
        path = str(raw).strip().strip("/")
        name = path if settings.CAIRN_OIDC_GROUP_FULL_PATH else path.rsplit("/", 1)[-1]
        if name:
            names.add(name[:150])
    return names


def _email(sociallogin, claims: dict) -> tuple[str, bool]:
    """The address and whether the provider denies having verified it.

    Only an explicit `email_verified: false` counts against it: some issuers (Entra ID) never
    send the claim, and the issuer configured here is trusted for its own users.
    """
    email = (claims.get("email") or getattr(sociallogin.user, "email", "") or "").strip()
    verified = claims.get("email_verified", True)
    if isinstance(verified, str):
        verified = verified.strip().lower() != "false"
    return email, verified is not False


def refusal(request, *, email: str, reason: str, deactivated: bool = False):
    context = {"email": email, "reason": reason, "deactivated": deactivated,
               "domains": [] if deactivated else settings.CAIRN_OIDC_ALLOWED_DOMAINS}  # fmt: skip
    response = render(request, "account/sso_refused.html", context, status=403)
    return ImmediateHttpResponse(response)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request, sociallogin):
        return True  # who may enter is decided in pre_social_login

    def pre_social_login(self, request, sociallogin):
        """Refuse other domains before any user is created; refresh groups of known users."""
        claims = _claims(sociallogin)
        if sociallogin.is_existing and not sociallogin.user.is_active:
            # Deactivated (manage.py revoke_access, or 'active' unticked in the admin): the
            # identity provider's word does not bring them back, nor its groups their flags.
            log.warning("SSO sign-in refused for %s: the account is deactivated", sociallogin.user)
            raise refusal(
                request,
                email=_email(sociallogin, claims)[0],
                reason="Your Cairn account is deactivated (its access was revoked). Ask a Cairn "
                "administrator to reactivate it if you need it again.",
                deactivated=True,
            )
        domains = settings.CAIRN_OIDC_ALLOWED_DOMAINS
        if domains:
            email, verified = _email(sociallogin, claims)
            domain = email.rpartition("@")[2].lower()
            if not email or domain not in domains:
                log.warning("SSO sign-in refused for %r: domain not allowed", email)
                raise refusal(
                    request,
                    email=email,
                    reason="Your email address is not in a domain allowed to use this Cairn.",
                )
            if not verified:
                raise refusal(
                    request,
                    email=email,
                    reason="Your identity provider has not verified this email address.",
                )
        if sociallogin.is_existing:
            sync_groups(sociallogin.user, claimed_groups(claims))

    def save_user(self, request, sociallogin, form=None):
        with transaction.atomic():
            user = super().save_user(request, sociallogin, form)
            names = claimed_groups(_claims(sociallogin))
            if names is None and settings.CAIRN_OIDC_GROUPS_CLAIM and settings.CAIRN_GUEST_GROUPS:
                # Fail closed: without the claim we cannot tell a member from a guest.
                log.warning("SSO sign-in of %s without a groups claim: made a guest.", user)
                names = {settings.CAIRN_GUEST_GROUPS[0]}
            sync_groups(user, names)
        return user


STAFF_MODELS = ("project", "subtopic", "entry", "source")


def staff_permissions():
    return Permission.objects.filter(
        content_type__app_label="knowledge", content_type__model__in=STAFF_MODELS
    )


def sync_groups(user, names: set[str] | None) -> None:
    """Make the user's Django groups (and staff/superuser flags) follow the claim.

    Only done when a groups claim is configured: the identity provider then owns group
    membership, and a flag follows its group setting only when that setting is not empty.
    A sign-in without the claim (None) changes nothing; an empty claim clears the groups.
    """
    if not settings.CAIRN_OIDC_GROUPS_CLAIM or names is None:
        return
    groups = []
    for name in sorted(names):
        group, created = Group.objects.get_or_create(name=name)
        if created and name in settings.CAIRN_OIDC_STAFF_GROUPS:
            # Staff need model permissions to use the admin; which projects they reach is
            # still decided by membership (knowledge.selectors).
            group.permissions.set(staff_permissions())
        groups.append(group)
    user.groups.set(groups)
    wanted = {}
    if settings.CAIRN_OIDC_STAFF_GROUPS:
        wanted["is_staff"] = bool(names & set(settings.CAIRN_OIDC_STAFF_GROUPS))
    if settings.CAIRN_OIDC_SUPERUSER_GROUPS:
        wanted["is_superuser"] = bool(names & set(settings.CAIRN_OIDC_SUPERUSER_GROUPS))
        if wanted["is_superuser"]:
            wanted["is_staff"] = True  # a superuser without admin access makes no sense
    changed = [flag for flag, value in wanted.items() if getattr(user, flag) != value]
    for flag in changed:
        setattr(user, flag, wanted[flag])
    if changed:
        user.save(update_fields=changed)
