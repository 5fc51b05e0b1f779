"""`GET /me`: the principal the gateway resolved from the caller's credentials, so a
client holding only an API key (the web UI) can learn whose key it is."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ag_ui_temporal.gateway.deps import AuthenticatedRoute, PrincipalDep, SettingsDep

router = APIRouter(tags=["auth"], route_class=AuthenticatedRoute)


class Me(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    principal: str
    groups: list[str]
    auth_mode: str
    """The gateway's `AUTH_MODE` (`dev`, `api_key`, `jwt`, `none`)."""


@router.get("/me")
async def get_me(principal: PrincipalDep, settings: SettingsDep) -> Me:
    """Who this request authenticates as; 401 like every other route without credentials."""
    return Me(principal=principal.name, groups=list(principal.groups), auth_mode=settings.auth_mode)
