"""Source URLs with a scheme a page must not link (javascript:, data:, vbscript:, …) lose it.

Sources are now checked when written (knowledge.inputs.source_url); rows stored before that keep
their text in the title, readable but never a link target, and an empty url. Sources have no
history table (django-simple-history tracks entries, not their source links), and the git
mirror writes a source's url as plain YAML text, so only this table holds link targets.

The check is frozen here on purpose: a migration must mean the same thing whenever it runs."""

import re

from django.conf import settings
from django.db import migrations

SAFE = {"http", "https", "mailto"}
NEVER = {"javascript", "vbscript", "data", "blob", "file"}
SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
C0_AND_SPACE = "".join(map(chr, range(0x21)))


def _linkable(url: str) -> bool:
    text = url.translate(dict.fromkeys(map(ord, "\t\n\r"))).strip(C0_AND_SPACE)
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        return False
    extra = {str(s).strip().lower() for s in getattr(settings, "CAIRN_SOURCE_URL_SCHEMES", [])}
    match = SCHEME.match(text)
    return bool(match) and match.group(1).lower() in SAFE | (extra - NEVER)


def neutralise_source_urls(apps, schema_editor) -> int:
    """Move every unlinkable source URL into its title (as text). Returns how many moved."""
    Source = apps.get_model("knowledge", "Source")
    moved = []
    for source in Source.objects.exclude(url="").only("pk", "url", "title").iterator():
        if _linkable(source.url):
            continue
        kept = f"{source.title} ({source.url})" if source.title else source.url
        source.title, source.url = kept[:500], ""
        moved.append(source)
    Source.objects.bulk_update(moved, ["url", "title"], batch_size=500)
    return len(moved)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0004_lexemestat_per_project"),
    ]

    operations = [
        migrations.RunPython(neutralise_source_urls, migrations.RunPython.noop, elidable=True),
    ]
