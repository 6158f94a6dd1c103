"""factory_boy factories. Entries are created through the services, like every other write."""

import factory
from django.contrib.auth import get_user_model

from knowledge.actors import Actor
from knowledge.models import Entry, Project, Sensitivity
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class StaffFactory(UserFactory):
    is_staff = True
    is_superuser = True


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda p: p.slug.replace("-", " ").title())
    sensitivity = Sensitivity.INTERNAL

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        actor = Actor.for_user(UserFactory(username="factory"))
        slug = kwargs.pop("slug")
        return project_create(actor=actor, slug=slug, fields=ProjectFields.pick(kwargs))


class EntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Entry

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Entry {n}")
    body = factory.Faker("paragraph")
    subtopic = ""
    kind = "note"
    tags = factory.LazyFunction(list)

    @classmethod
    def _create(cls, model_class, *args, actor=None, project, subtopic, **kwargs):
        actor = actor or Actor.for_user(UserFactory(username="factory"))
        return entry_upsert(
            actor=actor, project=project.slug, subtopic=subtopic, fields=EntryFields(**kwargs)
        ).entry
