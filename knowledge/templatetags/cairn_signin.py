"""{% sign_in_options as opts %}: the SSO buttons and whether the password form is shown."""

from allauth.socialaccount.adapter import get_adapter
from django import template
from django.conf import settings
from django.urls import reverse

register = template.Library()


@register.simple_tag(takes_context=True)
def sign_in_options(context):
    request = context.get("request")
    providers = [
        {
            "name": p.name,
            "url": reverse("openid_connect_login", kwargs={"provider_id": p.app.provider_id}),
        }
        for p in get_adapter().list_providers(request)
        if p.id == "openid_connect"
    ]
    return {"providers": providers, "password_login": settings.CAIRN_PASSWORD_LOGIN}
