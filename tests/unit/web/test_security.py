"""Security headers on every response: the app's strict policy, the API docs' own, and headers set only once."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from doctordesk.web.security import APP_POLICY, DOCS_POLICY, SecurityHeaders


def app() -> SecurityHeaders:
    async def page(request: object) -> PlainTextResponse:
        return PlainTextResponse("ok", headers={"Content-Security-Policy": "default-src *"})

    return SecurityHeaders(Starlette(routes=[Route("/", page), Route("/docs", page)]))


async def test_every_response_gets_the_strict_policy_replacing_any_other():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app()), base_url="http://t") as http:
        response = await http.get("/")
        assert response.headers.get_list("content-security-policy") == [APP_POLICY]
        assert "'unsafe-inline'" not in APP_POLICY and "script-src 'self'" in APP_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
        missing = await http.get("/nowhere")
        assert missing.headers["content-security-policy"] == APP_POLICY


async def test_the_interactive_api_docs_get_a_policy_of_their_own():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app()), base_url="http://t") as http:
        assert (await http.get("/docs")).headers["content-security-policy"] == DOCS_POLICY
