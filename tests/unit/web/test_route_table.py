"""The route index decides as a walk of the whole route list would: the first full match, else the first partial
one, whatever the routes' order, parameters, mounts and root path; ``url_path_for`` reaches the routes behind it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Scope

from doctordesk.app import Service
from doctordesk.web.route_table import CHOSEN, RouteIndex, add_routes, fixed_segments, listed


async def text(_request: Any) -> PlainTextResponse:
    return PlainTextResponse("")


class Everywhere(Route):
    """Matches by its own rule, not by its path: the index must try it for every request."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["path"].endswith(".special"):
            return Match.FULL, {"endpoint": self.endpoint, "path_params": {}}
        return Match.NONE, {}


ROUTES: list[BaseRoute] = [
    Route("/a/b", text, methods=["PUT"], name="ab-put"),
    Route("/a/{x}", text, methods=["GET"], name="a-x"),
    Route("/a/b", text, methods=["PATCH"], name="ab-patch"),
    Route("/{any}/b", text, methods=["POST"], name="any-b"),
    Route("/a/b/c", text, methods=["GET"], name="abc"),
    Everywhere("/never", text, name="everywhere"),
    Route("/files/{rest:path}", text, methods=["GET"], name="files"),
    Route("/f/{name}.ics", text, methods=["GET"], name="ics"),
    Mount("/static", app=text, name="static"),
    Route("/", text, methods=["GET"], name="root"),
    Mount("/", app=text, name="all"),
]

PATHS = [
    "/",
    "",
    "/a",
    "/a/",
    "/a/b",
    "/a/b/",
    "/a/c",
    "/z/b",
    "/a/b/c",
    "/a/b/c/d",
    "/x.special",
    "/a/b.special",
    "/files/one/two",
    "/files",
    "/f/x.ics",
    "/static/app.css",
    "/static",
    "//",
    "/A/b",
]


def walk(routes: list[BaseRoute], scope: Scope) -> tuple[Match, BaseRoute | None, Scope]:
    """What a router's walk of the whole list decides."""
    partial: tuple[BaseRoute, Scope] | None = None
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.FULL:
            return match, route, child
        if match is Match.PARTIAL and partial is None:
            partial = (route, child)
    if partial is not None:
        return Match.PARTIAL, partial[0], partial[1]
    return Match.NONE, None, {}


def scope_for(method: str, path: str, *, root_path: str = "", kind: str = "http") -> Scope:
    return {"type": kind, "method": method, "path": path, "root_path": root_path, "headers": []}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "POST", "DELETE"])
@pytest.mark.parametrize("routes", [ROUTES, ROUTES[:-1]], ids=["with a mount at the root", "without"])
def test_the_index_chooses_what_walking_every_route_chooses(routes, method, path):
    index = RouteIndex(routes)
    scope = scope_for(method, path)
    expected_match, expected_route, expected_child = walk(routes, scope)
    match, child = index.matches(scope)
    assert match is expected_match
    chosen = child.pop(CHOSEN, None)
    assert chosen is expected_route
    assert child == expected_child


@pytest.mark.parametrize("path", ["/app/a/b", "/app/files/x", "/app/static/x", "/app", "/app/"])
def test_the_root_path_is_left_out_as_the_routes_leave_it_out(path):
    index = RouteIndex(ROUTES)
    scope = scope_for("GET", path, root_path="/app")
    expected_match, expected_route, _ = walk(ROUTES, scope)
    match, child = index.matches(scope)
    assert (match, child.get(CHOSEN)) == (expected_match, expected_route)


def test_only_routes_whose_fixed_segments_a_path_starts_with_are_tried():
    index = RouteIndex(ROUTES)

    def tried(path: str) -> list[str]:
        return [getattr(route, "name", "") for route, _ in index.candidates(path)]

    assert tried("/a/b/c") == ["ab-put", "a-x", "ab-patch", "any-b", "abc", "everywhere", "all"]
    assert tried("/nowhere") == ["any-b", "everywhere", "all"]


def test_fixed_segments_stop_at_the_first_parameter_and_a_route_with_its_own_matching_has_none():
    assert fixed_segments(Route("/a/b/{x}/c", text)) == ["a", "b"]
    assert fixed_segments(Route("/f/{name}.ics", text)) == ["f"]
    assert fixed_segments(Mount("/static", app=text)) == ["static"]
    assert fixed_segments(Mount("/", app=text)) == []
    assert fixed_segments(Everywhere("/a/b", text)) == []


def test_websocket_and_lifespan_scopes_are_answered_as_the_routes_answer_them():
    index = RouteIndex(ROUTES)
    websocket = scope_for("GET", "/static/x", kind="websocket")
    assert index.matches(websocket)[0] is walk(ROUTES, websocket)[0] is Match.FULL
    assert index.matches({"type": "lifespan"}) == (Match.NONE, {})


def test_url_path_for_finds_a_route_behind_the_index():
    index = RouteIndex(ROUTES)
    assert index.url_path_for("a-x", x="7") == "/a/7"
    assert index.url_path_for("files", rest="one/two") == "/files/one/two"


def test_indexing_again_keeps_every_route_once_in_its_order():
    app = Service(openapi_url=None, docs_url=None, redoc_url=None)
    app.router.routes.extend(ROUTES[:3])
    app.index_routes()
    app.router.routes.extend(ROUTES[3:])
    app.index_routes()
    assert [type(route) for route in app.router.routes] == [RouteIndex]
    assert app.routes == listed(app.router.routes) == ROUTES


# --- routes added to the app's router directly -------------------------------------------------------------------


def router_with_settings() -> APIRouter:
    router = APIRouter(prefix="/things", tags=["things"], responses={418: {"description": "A teapot"}})

    @router.get("/{thing_id}", summary="One thing")
    async def one_thing(thing_id: int) -> dict[str, int]:
        """The thing."""
        return {"id": thing_id}

    @router.post("", status_code=201)
    async def new_thing() -> dict[str, str]:
        """Make one."""
        return {"made": "yes"}

    return router


def test_added_routes_are_the_routers_routes_with_the_apps_dependency_overrides():
    router = router_with_settings()
    app = FastAPI()
    add_routes(app, router)
    added = [route for route in app.router.routes if isinstance(route, APIRoute)]
    assert len(added) == len(router.routes) == 2
    # Objects built again for the app, compared by what they say; every other attribute is the router's own.
    rebuilt = {"app", "dependant", "response_field", "response_fields", "body_field", "dependency_overrides_provider"}
    for source, route in zip(router.routes, added, strict=True):
        assert isinstance(source, APIRoute)
        assert type(route) is type(source)
        assert route.dependency_overrides_provider is app
        assert repr(route.response_field) == repr(source.response_field)
        assert route.dependant.call is source.dependant.call
        mine = {k: v for k, v in vars(route).items() if k not in rebuilt and k != "strict_content_type"}
        theirs = {k: v for k, v in vars(source).items() if k not in rebuilt and k != "strict_content_type"}
        assert mine == theirs
        assert bool(getattr(route.strict_content_type, "value", route.strict_content_type)) == bool(
            getattr(source.strict_content_type, "value", source.strict_content_type)
        )


def test_added_routes_reuse_the_routers_analysed_parameters_and_models():
    # Analysing an endpoint (parameters, body, response model) is what makes building an app slow: an app whose
    # router adds nothing of its own takes it from the router, only the request handler is its own.
    router = router_with_settings()
    app = FastAPI()
    add_routes(app, router)
    added = [route for route in app.router.routes if isinstance(route, APIRoute)]
    for source, route in zip(router.routes, added, strict=True):
        assert isinstance(source, APIRoute)
        assert route is not source and route.app is not source.app
        assert route.dependant is source.dependant
        assert route.response_field is source.response_field


def test_an_app_router_with_dependencies_of_its_own_adds_them_to_every_route():
    from fastapi import Depends

    def checked() -> None:
        return None

    app = FastAPI(dependencies=[Depends(checked)])
    router = router_with_settings()
    add_routes(app, router)
    added = [route for route in app.router.routes if isinstance(route, APIRoute)]
    assert [route.path for route in added] == [route.path for route in router.routes]
    for route in added:
        assert [d.dependency for d in route.dependencies] == [checked]
        assert [d.call for d in route.dependant.dependencies][0] is checked


def test_added_routes_describe_the_api_as_the_included_router_does():
    added = Service(title="t", version="1")
    add_routes(added, router_with_settings())
    added.index_routes()
    included = FastAPI(title="t", version="1")
    included.include_router(router_with_settings())
    assert added.openapi()["paths"]  # not trivially equal
    assert added.openapi() == included.openapi()


async def test_added_routes_honour_the_apps_dependency_overrides():
    from fastapi import Depends

    def word() -> str:
        return "real"

    router = APIRouter()

    @router.get("/word")
    async def say(value: str = Depends(word)) -> dict[str, str]:
        return {"word": value}

    app = FastAPI()
    add_routes(app, router)
    app.dependency_overrides[word] = lambda: "stand-in"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        assert (await http.get("/word")).json() == {"word": "stand-in"}


def test_only_path_operations_are_added():
    router = APIRouter()
    router.add_route("/plain", text)
    with pytest.raises(TypeError, match="only path operations"):
        add_routes(FastAPI(), router)


def test_a_router_with_a_lifespan_of_its_own_is_not_added():
    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        yield

    with pytest.raises(ValueError, match="lifespan"):
        add_routes(FastAPI(), APIRouter(lifespan=lifespan))
    add_routes(FastAPI(), APIRouter())  # none: nothing to add, nothing refused
