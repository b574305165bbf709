"""The app's route table: the routers' path operations added to the app's own router, found through an index of
their paths' fixed segments, so finding a route costs the same for every path (docs/operations.md, One process)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi._body_limit import wrap_app_with_body_limit
from fastapi.datastructures import Default, DefaultPlaceholder
from fastapi.routing import APIRoute, request_response
from fastapi.utils import get_value_or_default
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

# The route the index chose, handed from ``matches`` to ``handle`` through the request's scope.
CHOSEN = "doctordesk.route"

# Routes whose matching is their path's regular expression: a request can only match them when its path starts
# with the path's fixed segments. Any other route (a subclass that decides otherwise, an included router, a
# host) is tried for every request.
_BY_PATH = frozenset({Route.matches, APIRoute.matches, WebSocketRoute.matches, Mount.matches})
# Such a route's path pattern, matched first: a path it refuses is no match, at a fraction of the route's cost.
_Check = Callable[[str], object]
# What a router without a lifespan of its own has in its place.
_NO_LIFESPAN = type(APIRouter().lifespan_context)


def add_routes(app: FastAPI, router: APIRouter) -> None:
    """Add ``router``'s path operations to the app's own router, as ``app.include_router(router)`` serves them."""
    if router.on_startup or router.on_shutdown or type(router.lifespan_context) is not _NO_LIFESPAN:
        raise ValueError("a router with a lifespan or startup or shutdown handlers of its own is included, not added")
    for route in router.routes:
        if not isinstance(route, APIRoute):
            raise TypeError(f"only path operations are added directly, not {route!r}")
        if _adds_nothing(app.router):
            app.router.routes.append(_for_app(route, app, router))
            continue
        app.router.add_api_route(
            route.path,
            route.endpoint,
            # A streaming endpoint's item type is read from its annotation again, as when it was declared.
            response_model=Default(None) if route.stream_item_type is not None else route.response_model,
            status_code=route.status_code,
            tags=route.tags,
            dependencies=route.dependencies,
            summary=route.summary,
            description=route.description,
            response_description=route.response_description,
            responses=route.responses,
            deprecated=route.deprecated,
            methods=route.methods,
            operation_id=route.operation_id,
            response_model_include=route.response_model_include,
            response_model_exclude=route.response_model_exclude,
            response_model_by_alias=route.response_model_by_alias,
            response_model_exclude_unset=route.response_model_exclude_unset,
            response_model_exclude_defaults=route.response_model_exclude_defaults,
            response_model_exclude_none=route.response_model_exclude_none,
            include_in_schema=route.include_in_schema,
            response_class=route.response_class,
            name=route.name,
            route_class_override=type(route),
            callbacks=route.callbacks,
            openapi_extra=route.openapi_extra,
            generate_unique_id_function=route.generate_unique_id_function,
            strict_content_type=route.strict_content_type,
            max_body_size=route.max_body_size,
            form_limits={**router.form_limits, **route.form_limits},  # the router's limits are the defaults
        )


def _adds_nothing(target: APIRouter) -> bool:
    """Whether a route added to ``target`` is the route as its router declared it (no prefix, tags, dependencies,
    responses, callbacks or defaults of ``target``'s own to merge into it; its strict content type setting is taken
    as ``add_api_route`` takes it)."""
    return (
        not target.prefix
        and not target.dependencies
        and not target.tags
        and not target.responses
        and not target.callbacks
        and not target.deprecated
        and target.include_in_schema
        and target.max_body_size is None
        and all(
            isinstance(default, DefaultPlaceholder)
            for default in (target.default_response_class, target.generate_unique_id_function)
        )
    )


def _for_app(route: APIRoute, app: FastAPI, router: APIRouter) -> APIRoute:
    """``route`` as ``add_api_route`` on the app would build it: a copy sharing the analysed parts (dependencies,
    body and response fields), whose request handler reads the app's dependency overrides."""
    added = copy.copy(route)
    added.dependency_overrides_provider = app
    added.form_limits = {**router.form_limits, **route.form_limits}  # the router's limits are the defaults
    added.strict_content_type = get_value_or_default(route.strict_content_type, app.router.strict_content_type)
    added.app = _BuiltAtFirstRequest(added)
    return added


class _BuiltAtFirstRequest:
    """A route's request handler, built (as ``APIRoute`` builds it) when the route first serves a request, then in
    its place: a process serves a few of its hundreds of routes often and many never, and an app built for a test
    serves one or two."""

    __slots__ = ("route",)

    def __init__(self, route: APIRoute) -> None:
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self.route
        if route.app is self:
            route.app = wrap_app_with_body_limit(request_response(route.get_route_handler()), route.max_body_size)
        await route.app(scope, receive, send)


def listed(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """``routes`` with the routes behind each index in its place."""
    found: list[BaseRoute] = []
    for route in routes:
        found.extend(route.routes if isinstance(route, RouteIndex) else [route])
    return found


class _Node:
    __slots__ = ("children", "own", "candidates")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.own: list[int] = []  # positions of the routes whose fixed segments end here
        self.candidates: tuple[tuple[BaseRoute, _Check | None], ...] = ()

    def settle(self, routes: Sequence[BaseRoute], above: list[int]) -> None:
        """Each node's candidates: its own routes and those of the nodes above it, in table order."""
        positions = sorted(above + self.own)
        self.candidates = tuple((routes[p], _path_check(routes[p])) for p in positions)
        for child in self.children.values():
            child.settle(routes, positions)


class RouteIndex(BaseRoute):
    """Routes found by their leading fixed path segments; ``routes`` keeps them in their order."""

    def __init__(self, routes: Iterable[BaseRoute]) -> None:
        self.routes = list(routes)
        self._root = _Node()
        for position, route in enumerate(self.routes):
            node = self._root
            for segment in fixed_segments(route):
                node = node.children.setdefault(segment, _Node())
            node.own.append(position)
        self._root.settle(self.routes, [])

    def candidates(self, path: str) -> tuple[tuple[BaseRoute, _Check | None], ...]:
        """The routes that can match ``path`` (a route path: without the root path), in table order, each with the
        check of its path pattern."""
        node = self._root
        for segment in path.split("/")[1:]:
            child = node.children.get(segment)
            if child is None:
                break
            node = child
        return node.candidates

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] not in ("http", "websocket"):
            return Match.NONE, {}
        path = route_path(scope)
        partial: Scope | None = None
        for route, check in self.candidates(path):
            if check is not None and check(path) is None:
                continue
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                child_scope[CHOSEN] = route
                return match, child_scope
            if match is Match.PARTIAL and partial is None:
                child_scope[CHOSEN] = route
                partial = child_scope
        if partial is not None:
            return Match.PARTIAL, partial
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: BaseRoute = scope.pop(CHOSEN)
        await route.handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        for route in self.routes:
            try:
                return route.url_path_for(name, **path_params)
            except NoMatchFound:
                pass
        raise NoMatchFound(name, path_params)

    def __repr__(self) -> str:
        return f"RouteIndex({len(self.routes)} routes)"


def _path_check(route: BaseRoute) -> _Check | None:
    """The match of a route's path pattern (None: the route decides alone)."""
    pattern = getattr(route, "path_regex", None)
    if type(route).matches not in _BY_PATH or not isinstance(pattern, re.Pattern):
        return None
    check: _Check = pattern.match
    return check


def fixed_segments(route: BaseRoute) -> list[str]:
    """The segments a path must start with for ``route`` to match it: those of its path before the first
    parameter; none for a route that matches otherwise than by its path."""
    path = getattr(route, "path", None)
    if type(route).matches not in _BY_PATH or not isinstance(path, str):
        return []
    segments = []
    for segment in path.split("/")[1:]:
        if "{" in segment:
            break
        segments.append(segment)
    return segments


def route_path(scope: Scope) -> str:
    """The path routes match: the request's path without the app's root path (as Starlette's routes read it)."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if not root_path or not path.startswith(root_path):
        return path
    if path == root_path:
        return ""
    if path[len(root_path)] == "/":
        return path[len(root_path) :]
    return path
