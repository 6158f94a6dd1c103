"""The authorization endpoint is a page of the site (sign-in and consent); the machine endpoints
(token, registration, revocation, metadata) are served beside Django (memory_site/asgi.py)."""

from django.urls import path

from memory_site.oauth import views

urlpatterns = [path("oauth/authorize", views.authorize, name="oauth_authorize")]
