"""OperationTiming moves from the site app to ops with its table (site_operationtiming): the
state only, so the rows stay. On a fresh database site 0001 creates the table first."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [("site", "0001_operation_timing")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="OperationTiming",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("at", models.DateTimeField(db_index=True)),
                        ("surface", models.CharField(max_length=16)),
                        ("operation", models.CharField(max_length=120)),
                        ("outcome", models.CharField(max_length=16)),
                        ("error", models.CharField(blank=True, max_length=120)),
                        ("total_ms", models.FloatField()),
                        ("db_ms", models.FloatField(null=True)),
                        ("embed_ms", models.FloatField(null=True)),
                        ("git_ms", models.FloatField(null=True)),
                        ("entries", models.IntegerField(null=True)),
                        ("content_bytes", models.IntegerField(null=True)),
                    ],
                    options={
                        "verbose_name": "operation timing",
                        "db_table": "site_operationtiming",
                        "indexes": [
                            models.Index(fields=["operation", "at"], name="timing_operation_at")
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
