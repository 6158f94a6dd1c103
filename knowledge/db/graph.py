"""The graph step's one write: an entry's facts that its new text no longer holds are closed at
this revision, its new observations and relations added, in one statement (data-modifying CTEs
touch different rows; `INSERT … SELECT FROM jsonb_to_recordset`: the ORM can say neither). Each
observation's full-text vector is computed by the INSERT, as django.contrib.postgres's
SearchVector writes it: content A, category B, context C."""

from __future__ import annotations

import datetime as dt
import json

from django.db import connection

_WRITE_SQL = """
WITH closed_observations AS (
  UPDATE knowledge_observation SET valid_to = %(when)s, valid_to_version = %(version)s
   WHERE id = ANY(%(close_observations)s::bigint[])
), closed_relations AS (
  UPDATE knowledge_relation SET valid_to = %(when)s, valid_to_version = %(version)s
   WHERE id = ANY(%(close_relations)s::bigint[])
), observations AS (
  INSERT INTO knowledge_observation (entry_id, category, content, tags, context, "position",
         valid_from, valid_from_version, search_vector)
  SELECT %(entry)s, category, content, tags, context, "position", %(when)s, %(version)s,
         setweight(to_tsvector(%(config)s::regconfig, COALESCE(content, '')), 'A')
         || setweight(to_tsvector(%(config)s::regconfig, COALESCE(category, '')), 'B')
         || setweight(to_tsvector(%(config)s::regconfig, COALESCE(context, '')), 'C')
    FROM jsonb_to_recordset(%(observations)s::jsonb) AS x(category text, content text,
         tags text[], context text, "position" integer)
)
INSERT INTO knowledge_relation (source_id, relation_type, target_text, target_key, target_id,
       "position", valid_from, valid_from_version)
SELECT %(entry)s, type, text, key, target, "position", %(when)s, %(version)s
  FROM jsonb_to_recordset(%(relations)s::jsonb) AS x(type text, text text, key text,
       target bigint, "position" integer)
"""


def write_facts(
    *,
    entry_id: int,
    when: dt.datetime,
    version: int,
    close_observations: list[int],
    close_relations: list[int],
    observations: list[dict],
    relations: list[dict],
    config: str,
) -> None:
    """Close the observations and relations `close_*` (ids) at `when`/`version`, and add
    `observations` ({category, content, tags, context, position}) and `relations` ({type, text,
    key, target, position}) valid from then, for entry `entry_id`, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            _WRITE_SQL,
            {
                "entry": entry_id,
                "when": when,
                "version": version,
                "close_observations": close_observations,
                "close_relations": close_relations,
                "config": config,
                "observations": json.dumps(observations),
                "relations": json.dumps(relations),
            },
        )
