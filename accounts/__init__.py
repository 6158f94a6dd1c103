"""Team sign-in: OpenID Connect through django-allauth, group mapping, the password switch."""
