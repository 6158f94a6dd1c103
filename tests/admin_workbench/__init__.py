"""The admin a staff member works in: Cairn's search in the entry list, the subtopic tree as a
filter, bulk changes with a reason, the editor's live preview, a conflicting save that keeps the
person's text, and page costs that do not grow with the page.

By feature: test_search.py, test_tree.py (the tree as a filter, moving a subtopic),
test_bulk.py, test_editor.py (the live preview, a conflicting save), test_costs.py, test_index.py
(the dashboard). The staff member and the notes they work on are the fixtures in conftest.py;
workbench.py holds the helpers the modules share."""
