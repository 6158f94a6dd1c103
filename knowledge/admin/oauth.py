"""Admin for MCP authorization: the connected clients (each person's consents, with their
projects, access and last use) and the clients that may ask. Nothing is added or edited here:
a connection is made by its person's consent and ended by the revoke actions, which call the
services (staff see and end their own connections; superusers everyone's, and may revoke a
client for everyone)."""

from django.contrib import admin
from django.db.models import Count, Max
from django.utils import timezone
from unfold.admin import ModelAdmin

from knowledge.models import OAuthClient, OAuthGrant
from knowledge.selectors.oauth import redirect_host
from knowledge.services import oauth_client_revoke, oauth_grant_revoke


class ReadOnly(ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(OAuthGrant)
class ConnectedClientAdmin(ReadOnly):
    list_display = ("client", "user", "sees", "scope", "created_at", "last_used", "state")
    list_filter = ("scope",)
    search_fields = ("client__name", "user__username")
    actions = ["disconnect"]
    list_select_related = ("client", "user")

    def get_queryset(self, request):
        qs = super().get_queryset(request).prefetch_related("projects")
        qs = qs.annotate(last_token_use=Max("access_tokens__last_used_at"))
        return qs if request.user.is_superuser else qs.filter(user=request.user)

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_staff

    @admin.display(description="projects")
    def sees(self, obj):
        return obj.reach()

    @admin.display(description="last used", ordering="last_token_use")
    def last_used(self, obj):
        return obj.last_token_use or "never"

    @admin.display(description="state")
    def state(self, obj):
        if obj.revoked_at:
            return f"revoked: {obj.revoked_reason}" if obj.revoked_reason else "revoked"
        if obj.expires_at and obj.expires_at <= timezone.now():
            return "expired"
        return "active"

    @admin.action(description="Disconnect the selected clients (revoke their tokens)")
    def disconnect(self, request, queryset):
        actor = request.actor
        for grant in queryset:
            oauth_grant_revoke(actor=actor, grant_id=grant.pk)
        self.message_user(request, f"Disconnected {queryset.count()} connection(s).")


@admin.register(OAuthClient)
class ClientAdmin(ReadOnly):
    list_display = ("name", "kind", "answers_to", "created_at", "connections", "state")
    list_filter = ("kind",)
    search_fields = ("name", "client_id")
    actions = ["revoke"]
    exclude = ("secret_hash",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(live=Count("grants"))

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    @admin.display(description="answers go to")
    def answers_to(self, obj):
        return ", ".join(sorted({redirect_host(u) for u in obj.redirect_uris})[:3])

    @admin.display(description="connections", ordering="live")
    def connections(self, obj):
        return obj.live

    @admin.display(description="state")
    def state(self, obj):
        return "revoked" if obj.revoked_at else "active"

    @admin.action(description="Revoke the selected clients for everyone")
    def revoke(self, request, queryset):
        actor = request.actor
        ended = sum(oauth_client_revoke(actor=actor, client_pk=c.pk) for c in queryset)
        self.message_user(
            request, f"Revoked {queryset.count()} client(s); {ended} connection(s) ended."
        )
