"""The short list of PATCH endpoints a real-time message may name (docs/realtime.md): what the web app reads
instead of the whole API description, public, confirmed with a 304 once a client holds it."""

from __future__ import annotations

from doctordesk.web.endpoints import patch_templates


async def test_the_list_is_every_patch_endpoint_of_the_api_description_and_needs_no_sign_in(client, app):
    listed = await client.get("/realtime/endpoints")
    assert listed.status_code == 200 and listed.headers["content-type"] == "application/json"
    templates = listed.json()["patch_endpoints"]
    described = (await client.get("/openapi.json")).json()["paths"]
    assert templates == sorted(path for path, operations in described.items() if "patch" in operations)
    assert templates == patch_templates(app)
    assert {"/profile/appointments", "/profile/messages/threads"} <= set(templates)
    assert len(listed.content) * 20 < len((await client.get("/openapi.json")).content)


async def test_a_client_holding_the_list_gets_a_304(client):
    first = await client.get("/realtime/endpoints")
    assert first.headers["cache-control"] == "no-cache"
    again = await client.get("/realtime/endpoints", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == first.headers["etag"]
    other = await client.get("/realtime/endpoints", headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200 and other.json() == first.json()
