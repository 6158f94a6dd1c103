"""The pages for people, through Django's test client: every page, access, actions, manners.

By page: test_browse.py (signing in, home, a project, what is not there, the assets),
test_entry.py (an entry: rendering, history, diff, verify, status, who may act), test_search.py,
test_graph.py (the graph page, its data, the relations on an entry page), test_costs.py (no N+1:
what a page costs does not grow with the memory). The people and entries they share are the
fixtures in conftest.py; responses.py reads a response."""
