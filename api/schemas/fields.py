"""The string types every REST schema uses: each is bounded (knowledge.limits, named in the
422) and refuses a NUL byte, which PostgreSQL cannot store."""

from typing import Annotated

from django.conf import settings
from ninja import Field, Schema
from pydantic import AfterValidator, ConfigDict, model_validator

from knowledge import limits
from knowledge.inputs import find_nul

NUL_MESSAGE = "contains a NUL byte (\\x00), which cannot be stored; remove it"


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    return value


# A path or query string: refused with a 422 when it holds a NUL byte. Every string a caller
# sends has a maximum length (knowledge.limits), named in the 422; bodies keep their byte limit.
Text = Annotated[str, AfterValidator(_no_nul)]
Short = Annotated[str, Field(max_length=limits.SHORT), AfterValidator(_no_nul)]
Ref = Annotated[str, Field(max_length=limits.REF), AfterValidator(_no_nul)]
ProjectRef = Annotated[str, Field(max_length=limits.PROJECT), AfterValidator(_no_nul)]
PathText = Annotated[str, Field(max_length=limits.PATH), AfterValidator(_no_nul)]
ReasonText = Annotated[str, Field(max_length=limits.REASON), AfterValidator(_no_nul)]
SearchText = Annotated[
    str, Field(max_length=settings.CAIRN_SEARCH_MAX_QUERY_CHARS), AfterValidator(_no_nul)
]
Items = Annotated[list[Short], Field(max_length=limits.ITEMS)]  # in a JSON body


class NoNul(Schema):
    @model_validator(mode="before")
    @classmethod
    def _refuse_nul(cls, data):
        if (where := find_nul(data)) is not None:
            raise ValueError(f"{where} {NUL_MESSAGE}")
        return data


class StrictIn(NoNul):
    # Unknown fields are a typo the caller wants to hear about, not silently drop.
    model_config = ConfigDict(extra="forbid")
