from __future__ import annotations

import httpx


def test_a_real_server_serves_the_demo_and_refuses_calls_without_a_token(live_server):
    with httpx.Client(base_url=live_server.url) as http:
        assert http.put("/profile/appointments").status_code == 401
        token = http.post("/auth/login", data={"username": "doctor2", "password": "demo"}).json()["access_token"]
        page = http.put("/profile/appointments", headers={"Authorization": f"Bearer {token}"}).json()
        assert page["screen"] == "appointment-list"
        assert page["elements"][0]["value"] == "Appointments"
