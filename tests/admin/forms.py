"""What the admin's project change form posts: its settings and one row per membership."""


def project_form(project, roles: dict[str, str] | None = None, **changes) -> dict:
    """The form as shown, each member's role replaced from `roles` (by username), then
    `changes` applied to the settings."""
    roles = roles or {}
    memberships = list(project.memberships.select_related("user").order_by("pk"))
    data = {
        "name": project.name, "description": "", "sensitivity": project.sensitivity,
        "memberships-TOTAL_FORMS": str(len(memberships)),
        "memberships-INITIAL_FORMS": str(len(memberships)),
    }  # fmt: skip
    for i, m in enumerate(memberships):
        role = roles.get(m.user.username, m.role) if m.user_id else m.role
        data |= {f"memberships-{i}-id": m.pk, f"memberships-{i}-project": project.pk,
                 f"memberships-{i}-user": m.user_id or "", f"memberships-{i}-group": "",
                 f"memberships-{i}-role": role}  # fmt: skip
    return data | changes
