"""The admin's tests, in one place: the site's pages and saves (test_site, test_metadata,
test_schemas, test_graph), the workbench (index, tree, search, bulk actions, editor, costs) and
the revision pages history adds (test_revisions, test_undelete, on urls.py's admin of its own).

Two admin tests live elsewhere on purpose: the browser test (tests/web/test_admin_browser.py,
tests/web/admin_pages.py) needs tests/web/conftest.py's live site and Playwright's ordering, and
tests/access/surfaces_admin.py is one column of the access leak matrix.
"""
