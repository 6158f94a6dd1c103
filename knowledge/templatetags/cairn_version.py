"""{% cairn_version %}: Cairn's version (ops.version), for the admin's footer."""

from django import template

from ops.version import VERSION

register = template.Library()


@register.simple_tag
def cairn_version() -> str:
    return VERSION
