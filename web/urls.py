"""The pages for people, mounted at `/` (memory_site/urls.py)."""

from django.urls import path

from web import moves, runs, tokens, views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    path("graph/", views.graph, name="graph"),
    path("graph/data.json", views.graph_json, name="graph_data"),
    path("p/<slug:slug>/", views.project, name="project"),
    path("p/<slug:slug>/t/<path:path>/", views.project, name="subtopic"),
    path("e/<str:ref>/", views.entry, name="entry"),
    path("e/<str:ref>/diff/", views.diff, name="diff"),
    path("e/<str:ref>/verify/", views.verify, name="verify"),
    path("e/<str:ref>/status/", views.set_status, name="status"),
    path("e/<str:ref>/undelete/", views.undelete, name="undelete"),
    path("tokens/", tokens.tokens, name="tokens"),
    path("tokens/clients/<int:client_pk>/disconnect/", tokens.disconnect, name="disconnect"),
    path("tokens/<int:token_id>/revoke/", tokens.revoke, name="token_revoke"),
    path("e/<str:ref>/move/", moves.move, name="move"),
    path("runs/", runs.runs, name="runs"),
    path("runs/<str:key>/", runs.run, name="run"),
    path("runs/<str:key>/undo/", runs.undo, name="run_undo"),
    path("runs/<str:key>/revoke/", runs.revoke, name="run_revoke"),
]
