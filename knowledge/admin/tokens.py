"""Admin for personal API tokens. Staff see and create their own; superusers, everyone's.

The secret exists only in the response to the save that created it: that page shows it once
(not a message, which Django may keep in a cookie) and only its sha256 is stored.
"""

from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html
from unfold.admin import ModelAdmin

from knowledge.admin.common import ServiceWritesMixin
from knowledge.models import ApiToken
from knowledge.selectors import visible_projects
from knowledge.selectors.runs import DEFAULT_DAYS, MAX_DAYS, runs_list
from knowledge.services import token_create, token_revoke, token_update

RUNS_SHOWN = 100


@admin.register(ApiToken)
class ApiTokenAdmin(ServiceWritesMixin, ModelAdmin):
    list_display = (
        "name", "prefix", "user", "scope", "sees", "made_by", "agent_label", "last_used_at",
        "state", "runs",
    )  # fmt: skip
    list_filter = ("scope",)
    search_fields = ("name", "prefix", "user__username", "agent_label")
    readonly_fields = ("prefix", "last_used_at", "revoked_at", "created_at")
    filter_horizontal = ("projects",)
    actions = ["revoke_tokens"]

    def get_fields(self, request, obj=None):
        fields = ["user", "name", "scope", "projects", "agent_label", "expires_at"]
        if obj is None:
            return fields
        # Once made, "sees" says it in words: an empty list reads as all projects, which a
        # narrowed token whose projects were all deleted is not.
        fields[fields.index("projects")] = "sees"
        return [*fields, "prefix", "last_used_at", "revoked_at", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        # A token's powers are fixed at creation: to change them, revoke and create another.
        if obj is not None:
            return ("user", "scope", "sees", *self.readonly_fields)
        return self.readonly_fields

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("user", "grant__client")
        qs = qs.prefetch_related("projects")
        return qs if request.user.is_superuser else qs.filter(user=request.user)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "projects":
            kwargs["queryset"] = visible_projects(request.actor)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Staff who are not superusers may only create tokens for themselves.
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = type(request.user).objects.filter(pk=request.user.pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="projects")
    def sees(self, obj):
        return obj.reach()

    @admin.display(description="made by")
    def made_by(self, obj):
        """A personal token, or the client that got it by its person's consent."""
        return f"client: {obj.grant.client.name}" if obj.grant_id else "personal"

    @admin.display(description="runs")
    def runs(self, obj):
        return format_html(
            '<a href="{}?token={}">its runs</a>', reverse("admin:knowledge_apitoken_runs"), obj.pk
        )

    def get_urls(self):
        view = self.admin_site.admin_view(self.runs_view)
        return [path("runs/", view, name="knowledge_apitoken_runs"), *super().get_urls()]

    def runs_view(self, request):
        """What the tokens wrote, run by run (a superuser sees every run, others theirs and
        those in the projects they maintain); each opens on its page, where it is undone."""
        try:
            days = max(1, min(int(request.GET.get("days") or DEFAULT_DAYS), MAX_DAYS))
            token = int(request.GET["token"]) if request.GET.get("token") else None
        except ValueError:
            days, token = DEFAULT_DAYS, None
        found = runs_list(request.actor, days=days, token=token, limit=RUNS_SHOWN)
        context = {**self.admin_site.each_context(request), "opts": self.opts,
                   "title": "Agent runs", "runs": found, "days": days, "token": token,
                   "limit": RUNS_SHOWN}  # fmt: skip
        return TemplateResponse(request, "admin/knowledge/apitoken/runs.html", context)

    @admin.display(description="state")
    def state(self, obj):
        if obj.revoked_at:
            return "revoked"
        if obj.expires_at and obj.expires_at <= timezone.now():
            return "expired"
        return "active"

    def save_model(self, request, obj, form, change):
        if change:
            token_update(
                actor=request.actor,
                token_id=obj.pk,
                name=obj.name,
                agent_label=obj.agent_label,
                expires_at=obj.expires_at,
            )
            return
        created = token_create(
            actor=request.actor,
            user=form.cleaned_data["user"],
            name=form.cleaned_data["name"],
            scope=form.cleaned_data["scope"],
            projects=[p.pk for p in form.cleaned_data.get("projects") or []],
            agent_label=form.cleaned_data.get("agent_label") or "",
            expires_at=form.cleaned_data.get("expires_at"),
        )
        obj.pk = created.token.pk
        obj.refresh_from_db()
        request.cairn_token_secret = created.secret  # for response_add, this request only

    def response_add(self, request, obj, post_url_continue=None):
        """The page that shows the new secret, in the save's own response: a redirect would
        carry it in a message, and Django's default message storage is a cookie."""
        secret = getattr(request, "cairn_token_secret", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "token": obj,
                   "secret": secret, "title": "Copy the new token"}  # fmt: skip
        response = TemplateResponse(request, "admin/knowledge/apitoken/created.html", context)
        add_never_cache_headers(response)  # no cache keeps a copy of the page
        return response

    def save_related(self, request, form, formsets, change):
        """Nothing to do: token_create sets the projects, and they are frozen afterwards."""

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request, queryset):
        actor = request.actor
        for token in queryset:
            token_revoke(actor=actor, token_id=token.pk)
        self.message_user(request, f"Revoked {queryset.count()} token(s).")
