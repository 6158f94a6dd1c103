"""ApiToken.narrowed: a token restricted to projects stays restricted when they are deleted."""

from django.db import migrations, models


def mark_narrowed(apps, schema_editor):
    ApiToken = apps.get_model("knowledge", "ApiToken")
    narrowed = ApiToken.objects.filter(projects__isnull=False).values("pk")
    ApiToken.objects.filter(pk__in=narrowed).update(narrowed=True)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0008_entrychunk_source_hash")]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="narrowed",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.RunPython(mark_narrowed, migrations.RunPython.noop),
    ]
