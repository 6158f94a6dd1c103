from django.db import migrations, models


class Migration(migrations.Migration):
    """Each entry revision records the API token that wrote it, the agent label and the run
    (knowledge/models/revisions.py). Two partial indexes, written as SQL (the revision model is
    built by django-simple-history, whose Meta takes no indexes): a token's latest revision, which
    each of its writes reads to know whether it continues the token's run, and a run's rows.
    A third finds the entries that had a place before they moved (knowledge/selectors/
    addresses.py: an old address answers with the new one)."""

    dependencies = [("knowledge", "0014_oauth")]

    operations = [
        migrations.AddField(
            model_name="historicalentry",
            name="history_agent",
            field=models.CharField(blank=True, default="", editable=False, max_length=120),
        ),
        migrations.AddField(
            model_name="historicalentry",
            name="history_run",
            field=models.CharField(blank=True, default="", editable=False, max_length=80),
        ),
        migrations.AddField(
            model_name="historicalentry",
            name="history_token_id",
            field=models.PositiveBigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.RunSQL(
            "CREATE INDEX entry_revision_token_latest ON knowledge_historicalentry "
            "(history_token_id, history_id DESC) WHERE history_token_id IS NOT NULL",
            "DROP INDEX IF EXISTS entry_revision_token_latest",
        ),
        migrations.RunSQL(
            "CREATE INDEX entry_revision_run ON knowledge_historicalentry "
            "(history_run, history_user_id, history_id) WHERE history_run <> ''",
            "DROP INDEX IF EXISTS entry_revision_run",
        ),
        migrations.RunSQL(
            "CREATE INDEX entry_revision_place ON knowledge_historicalentry (project_id, slug)",
            "DROP INDEX IF EXISTS entry_revision_place",
        ),
    ]
