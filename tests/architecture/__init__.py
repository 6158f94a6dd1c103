"""The dependency rules, checked on the source (ast), so a shortcut fails the build.

One test per rule; each failure names the rule and lists every offender with its file and line:

1. surfaces never write the ORM directly, selectors never write;
2. the knowledge core never imports history, mcp_api or memory_site; nothing in the core
   imports a surface;
3. surfaces (admin, REST, MCP, web, commands) import services and selectors, never another
   kind of surface;
4. no module imports another module's `_private` names (a `_private` module is imported only
   from inside its own package);
5. surfaces never build ORM queries (the admin is built on querysets and is exempt);
6. public services are `transaction.atomic(durable=True)`, take `actor` and keyword-only
   arguments, call no other public service, and `knowledge.services` exports each of them;
7. the core's messages name no MCP tool (each surface adds its own next moves);
8. no module outside migrations, tests and bench is over 400 lines, and imports run one way:
   no circle of any length between our apps (knowledge, history, api, …), their packages
   (knowledge.search, history.mirror, …) nor modules, bench's included (any import, also
   inside a function: one put there to dodge a circle is still a circle);
9. ops imports no other Cairn app (the site hands it what it needs of the memory at startup);
10. admin and commands (`*/admin.py`, `*/admin/`, `*/management/` of every app) import Cairn code
    only from services and selectors, models, value modules and ops, besides their own package
    and the data command base: no admin imports another app's admin, no command reaches into
    the core's insides (MAY_IMPORT in test_admin_and_commands.py is the exact list);
11. one declaration per thing (a revision model, a restore that says which);
12. SQL text lives only in knowledge/db/: elsewhere a statement is a queryset, and what the ORM
    cannot say is named there (SQL_ALLOWED in test_sql.py: ops's own table, the site's server
    administration);
13. knowledge/ is built in floors (ground, data access, the access rule, entity reads, search and
    graph, note-type reads, reads for one caller, writes and the app's surfaces): a module imports
    its own package or a floor below (FLOORS in test_floors.py);
14. the site's MCP authorization (memory_site/oauth) writes through services and reads through
    selectors, like a surface: it issues tokens, and they are checked in one place;
15. a revision's token, agent label and run (which run it belongs to, what an undo takes back)
    are recorded by the write kernel alone, from the acting Actor.

Where they live: rules 1, 5 and 14 in test_writes_and_queries.py, 2, 3, 4 and 9 in test_imports.py,
6 and 7 in test_services.py, 8 in test_module_graph.py, 10 in test_admin_and_commands.py, 11 in
test_declarations.py, 12 in test_sql.py, 13 in test_floors.py, 15 in test_run_columns.py; each
module also shows its detectors failing on a sample tree. What they all read (the file sets, the
imports of a module, the report) is in source.py.

The files each rule reads are globs; a glob that matches no file means the code moved and the
rule silently checks nothing, so that fails too (test_rules_see_the_code.py).
"""
