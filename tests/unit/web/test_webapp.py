"""The web app's files: served as they are, revalidated on every load so modules of two releases never mix."""

from __future__ import annotations

from pathlib import Path

import httpx
from starlette.applications import Starlette

import doctordesk.web
from doctordesk.web.webapp import web_app_mount

STATIC = Path(doctordesk.web.__file__).parent / "static"


def client() -> httpx.AsyncClient:
    app = Starlette(routes=[web_app_mount(STATIC)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def test_every_file_is_revalidated_before_a_browser_reuses_its_copy():
    async with client() as http:
        for path in ("/", "/js/render.js", "/js/forms.js", "/app.css"):
            response = await http.get(path)
            assert response.status_code == 200
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["etag"]


async def test_an_unchanged_file_answers_not_modified():
    async with client() as http:
        first = await http.get("/js/render.js")
        again = await http.get("/js/render.js", headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
        assert again.headers["cache-control"] == "no-cache"
