"""The REST API (django-ninja): site (the NinjaAPI), auth, problems (RFC 7807 errors),
routers/ by resource, schemas/ by resource. A surface: it calls services and selectors only."""
