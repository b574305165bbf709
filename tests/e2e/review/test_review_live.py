"""Review and Approve over real HTTP (uvicorn on loopback, the demo clinic): the doctor suggests an alternative
through the screen's PATCHes and POST, the patient accepts it, the doctor's list shows the booking."""

from __future__ import annotations

from datetime import date, timedelta

import httpx

from doctordesk.screens.protocol import apply


def _find(elements, element_id):
    for e in elements:
        if e["id"] == element_id:
            return e
        found = _find(e.get("children", []), element_id)
        if found is not None:
            return found
    return None


def _weekday_ahead(days: int) -> str:
    day = date.today() + timedelta(days=days)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day.isoformat()


def _login(http: httpx.Client, username: str) -> dict[str, str]:
    token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def test_a_suggested_alternative_is_accepted_by_the_patient_over_http(live_server):
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        doctor = _login(http, "doctor1")
        patient = _login(http, "patient1")
        a = 1  # the demo's first request: Dr. Berger, Maria Schmidt
        page = http.put(f"/profile/appointments/{a}/approve", headers=doctor).json()
        elements, state = page["elements"], page["state"]

        def patch(suffix: str, data: dict[str, str] | None = None) -> None:
            nonlocal elements, state
            response = http.patch(
                f"/profile/appointments/{a}/approve{suffix}", headers={**doctor, "X-Screen-State": state}, data=data
            )
            assert response.status_code == 200, response.text
            body = response.json()
            elements, state = apply(elements, body["patches"]), body["state"]

        patch("/add-alternative")
        patch("/change", {"date~1": _weekday_ahead(12), "time~1": "14:30"})
        assert _find(elements, "doctor-fee~1")["value"].startswith("€")
        assert _find(elements, "approve").get("enabled", True) is True
        form = {e["name"]: str(e["value"]) for e in _walk(elements) if e.get("name") and "value" in e}
        form.pop("reason", None)
        response = http.post(f"/profile/appointments/{a}/approve", headers=doctor, data=form)
        assert response.status_code == 200, response.text
        assert response.json()["navigate"] == "/profile/appointments"

        offers = http.put(f"/profile/appointments/{a}/offers", headers=patient).json()
        accept = _find(offers["elements"], "accept~1")["action"]
        version = _find(offers["elements"], "version~1")["value"]
        answer = http.post(accept["endpoint"], headers=patient, data={"version": version})
        assert answer.status_code == 200, answer.text

        listing = http.put("/profile/appointments", headers=doctor).json()
        upcoming = _find(listing["elements"], "upcoming")
        assert _find(upcoming["children"], f"appointment-{a}") is not None
        assert _find(listing["elements"], f"status-{a}")["props"]["status"] == "approved"


def _walk(elements):
    for e in elements:
        yield e
        yield from _walk(e.get("children", []))
