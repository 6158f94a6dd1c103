"""Projects and their subtopics."""

from django.http import HttpRequest
from ninja import Router
from ninja.responses import Status

from api.schemas.fields import ProjectRef
from api.schemas.projects import ProjectIn, ProjectOut, ProjectPatch, SubtopicIn, SubtopicOut
from knowledge.selectors import project_overview, project_summary, subtopic_tree
from knowledge.services import ProjectFields, project_create, project_update, subtopic_ensure

router = Router()


@router.get("/projects", response=list[ProjectOut], tags=["projects"])
def list_projects(request: HttpRequest):
    return list(project_overview(request.auth))


@router.post("/projects", response={201: ProjectOut}, tags=["projects"])
def create_project(request: HttpRequest, data: ProjectIn):
    fields = ProjectFields.pick(data.model_dump())
    return Status(201, project_create(actor=request.auth, slug=data.slug, fields=fields))


@router.get("/projects/{project}", response=ProjectOut, tags=["projects"])
def get_project(request: HttpRequest, project: ProjectRef):
    return project_summary(request.auth, project)


@router.patch("/projects/{project}", response=ProjectOut, tags=["projects"])
def update_project(request: HttpRequest, project: ProjectRef, data: ProjectPatch):
    return project_update(
        actor=request.auth, project=project, fields=ProjectFields.pick(data.model_dump())
    )


@router.get("/projects/{project}/subtopics", response=list[SubtopicOut], tags=["projects"])
def list_subtopics(request: HttpRequest, project: ProjectRef):
    return subtopic_tree(request.auth, project)


@router.post("/projects/{project}/subtopics", response=list[SubtopicOut], tags=["projects"])
def ensure_subtopic(request: HttpRequest, project: ProjectRef, data: SubtopicIn):
    """Create every missing level of a path (`a/b/c` or `a > b > c`); returns the whole tree."""
    subtopic_ensure(actor=request.auth, project=project, path=data.path)
    return subtopic_tree(request.auth, project)
