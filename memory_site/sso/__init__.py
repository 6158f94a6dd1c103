"""Team sign-in: OpenID Connect through django-allauth, provisioning and group mapping."""
