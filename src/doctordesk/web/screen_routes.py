"""A screen's two routes, made from the function that builds its page: PUT answers the page, PATCH its poll
(docs/protocol.md). Each route keeps its own name, docstring and parameters, so the OpenAPI document names them
as if they had been written out."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter

from doctordesk.screens.viewing import Viewing
from doctordesk.web.deps import SCREEN_HEADERS, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SCREEN_RESPONSES


@dataclass(frozen=True, slots=True)
class Route:
    """One of the two routes: the endpoint's name (the operation id and summary come from it) and its docstring."""

    name: str
    doc: str


def screen_routes(
    router: APIRouter,
    path: str,
    view: Callable[..., Viewing],
    *,
    page: Route,
    poll: Route,
    params: dict[str, Any] | None = None,
) -> None:
    """Add ``PUT path`` (the page) and ``PATCH path`` (its poll) to ``router``. ``view(screen, **params)`` builds the
    screen; ``params`` maps each further parameter's name to its annotation, or to ``(annotation, default)``."""
    arguments = [inspect.Parameter("screen", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ScreenRequestDep)]
    for name, spec in (params or {}).items():
        annotation, default = spec if isinstance(spec, tuple) else (spec, inspect.Parameter.empty)
        arguments.append(
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default)
        )
    signature = inspect.Signature(arguments, return_annotation=dict[str, Any])

    async def page_route(screen: ScreenRequest, **values: Any) -> dict[str, Any]:
        return (await view(screen, **values).page()).to_json()

    async def poll_route(screen: ScreenRequest, **values: Any) -> dict[str, Any]:
        return (await view(screen, **values).poll(screen.state)).to_json()

    for endpoint, route, method in ((page_route, page, router.put), (poll_route, poll, router.patch)):
        endpoint.__name__ = endpoint.__qualname__ = route.name
        endpoint.__doc__ = route.doc
        endpoint.__signature__ = signature  # type: ignore[attr-defined]
        method(path, responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)(endpoint)
