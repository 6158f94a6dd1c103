"""Word statistics per project, so a reader's full-text IDF counts only what they may see.

The table holds derived data: it is rebuilt with the new shape and refilled here from the
entries' full-text vectors (the same counting as lexeme_stats_refresh)."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
INSERT INTO knowledge_lexemestat (project_id, word, ndoc)
SELECT e.project_id, u.lexeme, count(*)
FROM knowledge_entry e CROSS JOIN LATERAL unnest(e.search_vector) u
WHERE e.searchable AND e.search_vector IS NOT NULL
GROUP BY e.project_id, u.lexeme
UNION ALL
SELECT project_id, '', count(*) FROM knowledge_entry WHERE searchable GROUP BY project_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0003_graph_observations_relations"),
    ]

    operations = [
        migrations.DeleteModel(name="LexemeStat"),
        migrations.CreateModel(
            name="LexemeStat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("word", models.TextField()),
                ("ndoc", models.PositiveIntegerField()),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="knowledge.project",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("word", "project"), name="lexemestat_word_project"
                    )
                ],
            },
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
    ]
