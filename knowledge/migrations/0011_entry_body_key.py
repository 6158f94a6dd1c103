"""entry_body_key: an index on the md5 of each body with its whitespace collapsed and its case
folded (knowledge.models.entries.body_key), so a write report finds the entries that say the
same as a new one with one index lookup."""

from django.db import migrations, models
from django.db.models.functions import MD5, Lower, Trim


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0010_entry_revision_sources")]

    operations = [
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                MD5(
                    Lower(
                        Trim(
                            models.Func(
                                "body",
                                models.Value("\\s+"),
                                models.Value(" "),
                                models.Value("g"),
                                function="REGEXP_REPLACE",
                                output_field=models.TextField(),
                            )
                        )
                    )
                ),
                name="entry_body_key",
            ),
        ),
    ]
