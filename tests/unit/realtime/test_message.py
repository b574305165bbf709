"""The real-time message of spec 2.1 / 6.1: the shared vectors, the formatter, and the template matcher."""

from __future__ import annotations

from typing import Any

import pytest

from doctordesk.realtime import message
from doctordesk.realtime.message import EndpointMatcher, InvalidMessage, RealtimeMessage, format_message, parse

VECTORS: dict[str, Any] = message.load_vectors()
MATCHER = message.vectors_matcher()


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: repr(v["message"])[:60])
def test_every_shared_vector_parses_as_recorded(vector: dict[str, Any]) -> None:
    if not vector["valid"]:
        with pytest.raises(InvalidMessage):
            parse(vector["message"], is_endpoint=MATCHER)
        return
    parsed = parse(vector["message"], is_endpoint=MATCHER)
    assert parsed == RealtimeMessage(timeout=vector["timeout"], endpoint=vector["endpoint"])


@pytest.mark.parametrize("vector", [v for v in VECTORS["vectors"] if v["valid"]], ids=lambda v: repr(v["message"]))
def test_formatting_a_parsed_vector_gives_the_same_string(vector: dict[str, Any]) -> None:
    assert str(parse(vector["message"], is_endpoint=MATCHER)) == vector["message"]


def test_vectors_cover_each_case_of_spec_6_1() -> None:
    valid = [v for v in VECTORS["vectors"] if v["valid"]]
    cases = {(v["timeout"], v["endpoint"] is not None) for v in valid}
    assert cases == {(True, True), (True, False), (False, True), (False, False)}


def test_format_gives_the_four_shapes() -> None:
    assert format_message(timeout=True, endpoint="/profile/appointments") == "Timeout /profile/appointments"
    assert format_message(timeout=True) == "Timeout"
    assert format_message(endpoint="/profile/appointments") == "/profile/appointments"
    assert format_message() == ""


def test_format_refuses_an_endpoint_that_is_not_a_path() -> None:
    with pytest.raises(InvalidMessage):
        format_message(endpoint="profile/appointments")
    with pytest.raises(InvalidMessage):
        format_message(endpoint="/profile/a b")


def test_a_template_parameter_matches_one_positive_id_whatever_its_name() -> None:
    matcher = EndpointMatcher(["/x/{appointment_id}/y"])
    assert matcher("/x/12/y")
    assert not matcher("/x/ab/y")
    assert not matcher("/x/12/13/y")
    assert not matcher("/x//y")


def test_no_templates_match_nothing() -> None:
    with pytest.raises(InvalidMessage):
        parse("/profile/appointments", is_endpoint=EndpointMatcher([]))
    assert parse("Timeout", is_endpoint=EndpointMatcher([])).timeout


def test_templates_with_differently_named_parameters_are_the_same_endpoint() -> None:
    a = message.normalize_template("/profile/appointments/{appointment_id}/approve")
    assert a == message.normalize_template("/profile/appointments/{appointment-id}/approve")


def test_every_patch_route_of_the_app_is_listed_in_the_vectors(tmp_path: Any) -> None:
    from doctordesk.app import create_app
    from doctordesk.config import Settings
    from doctordesk.web.endpoints import patch_templates

    app = create_app(Settings(data_dir=tmp_path, database_url=f"sqlite+aiosqlite:///{tmp_path}/x.db"))
    listed = {message.normalize_template(t) for t in VECTORS["patch_endpoints"]}
    routes = {message.normalize_template(t) for t in patch_templates(app)}
    assert routes, "the app has PATCH routes"
    assert routes <= listed


def test_the_apps_matcher_accepts_its_own_patch_routes(tmp_path: Any) -> None:
    from doctordesk.app import create_app
    from doctordesk.config import Settings
    from doctordesk.web.endpoints import patch_endpoint_matcher

    app = create_app(Settings(data_dir=tmp_path, database_url=f"sqlite+aiosqlite:///{tmp_path}/x.db"))
    is_endpoint = patch_endpoint_matcher(app)
    assert parse("Timeout /profile/appointments", is_endpoint=is_endpoint).endpoint == "/profile/appointments"
    with pytest.raises(InvalidMessage):
        parse("/auth/me", is_endpoint=is_endpoint)
