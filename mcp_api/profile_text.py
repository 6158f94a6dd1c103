"""The text of whoami's answer. Imports nothing of mcp_api, so render may use it."""

from __future__ import annotations


def whoami_text(me: dict) -> str:
    """whoami's answer: who, how, which projects with which role, what next."""
    token = me["token"]
    how = ""
    if token:
        expires = token["expires"][:10] if token["expires"] else "never"
        only = f", only {', '.join(token['projects'])}" if token["projects"] else ""
        if token.get("narrowed") and not token["projects"]:
            only = ", no projects left: it sees nothing; revoke it or create another"
        how = f" (token {token['name']!r}, scope {token['scope']}, expires {expires}{only})"
    lines = [f"You are {me['user'] or 'nobody (not signed in)'}, writing as {me['agent']}{how}."]
    lines.append(_where_you_write(me))
    lines.append(f"Projects you can read ({len(me['projects'])}):")
    lines += [
        f"- {p['slug']} ({p['name']}, {p['sensitivity']}): {p['role']}"
        + (f"; to write, ask {p['ask']}" if "ask" in p else "")
        for p in me["projects"]
    ]
    lines.append(
        "You may create projects." if me["may_create_projects"] else "You may not create projects."
    )
    if me.get("version"):
        lines.append(f"This is Cairn {me['version']}.")
    lines.append("Next: browse(project) to look inside one; search(query) to find anything.")
    return "\n".join(lines)


def _where_you_write(me: dict) -> str:
    """The answer to "where may I write?", before the list of what the caller reads."""
    if "write" not in me.get("scopes", []):
        return "You may write nowhere: this token only reads."
    writable = [f"{p['slug']} ({p['role']})" for p in me["projects"] if p["role"] != "viewer"]
    if not writable:
        return "You may write in no project yet: ask a maintainer of one (listed below)."
    return f"You may write in: {', '.join(writable)}."
