"""The admin's theme (django-unfold) and the policy its pages are sent with.

Unfold's pages use Alpine.js, whose standard build evaluates its attribute expressions with
`new Function`: the admin's pages (and only those) add 'unsafe-eval' to script-src. Nothing
else is loosened: no inline script or style, no other host (unfold's upstream issues #1344 and
#2129: it ships no CSP build of Alpine). Its colours, which it would write into an inline
<style>, come from a file instead (knowledge/static/knowledge/admin/theme.css).
"""

from django.templatetags.static import static
from django.utils.csp import CSP

from memory_site.settings.access import SECURE_CSP

# The admin pages' policy: the site's, with 'unsafe-eval' for Alpine.js (see above).
CAIRN_ADMIN_CSP = {**SECURE_CSP, "script-src": [CSP.SELF, CSP.UNSAFE_EVAL]}


UNFOLD = {
    "SITE_TITLE": "Cairn",
    "SITE_HEADER": "Cairn",
    "SITE_SUBHEADER": "Team memory",
    "SITE_URL": "/",
    "SITE_SYMBOL": "landscape",
    "SHOW_HISTORY": True,
    "SHOW_VIEW_ON_SITE": True,
    "BORDER_RADIUS": "6px",
    # No inline <style>: an empty palette here, the real one in theme.css.
    "COLORS": lambda request: {},
    "STYLES": [
        lambda request: static("knowledge/admin/theme.css"),
        lambda request: static("knowledge/admin/cairn-admin.css"),
    ],
    "SCRIPTS": [lambda request: static("knowledge/admin/theme.js")],
    "SIDEBAR": {
        "show_search": True,
        "show_all_applications": True,
        # Built per request by the admin (only what the person may open, named as people say it).
        "navigation": "knowledge.admin.navigation.sidebar",
    },
}
