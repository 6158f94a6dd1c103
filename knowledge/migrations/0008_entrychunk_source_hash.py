from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0007_project_schema_library"),
    ]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="embed_pending_since",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="entrychunk",
            name="source_hash",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("embed_pending_since__isnull", False)),
                fields=["embed_pending_since"],
                name="entry_embed_pending",
            ),
        ),
        # Entries already waiting for vectors (text changed since they were embedded) wait
        # since their last change; a model change is marked by the embedding sweep.
        migrations.RunSQL(
            "UPDATE knowledge_entry SET embed_pending_since = updated_at WHERE embedded_hash <> "
            "encode(sha256(convert_to(content_hash || E'\\n' || title, 'UTF8')), 'hex')",
            migrations.RunSQL.noop,
        ),
    ]
