"""A patient app's standalone launch against a real server, with Authlib's OAuth 2 client (the walkthrough of
docs/smart.md, run as it is written there): PKCE S256, patient1 allows it on the consent page, the token reads
patient1's appointments only and cannot write, a refresh works (and rotates), a revoked token is refused, and once
patient1 revokes the app on her security page its refresh token is invalid_grant."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live import LiveServer, serving

DOC = Path(__file__).parents[3] / "docs" / "smart.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("smart")) as live:
        yield live


def walkthrough() -> str:
    """The Python blocks of docs/smart.md's walkthrough, joined."""
    text = DOC.read_text().split("## Walkthrough", 1)[1]
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))


def test_the_walkthrough_of_a_patient_apps_standalone_launch_runs(server: LiveServer) -> None:
    code = walkthrough()
    assert "create_authorization_url" in code and "revoke_token" in code
    scope: dict[str, object] = {"BASE": server.url}
    exec(compile(code, str(DOC), "exec"), scope)  # noqa: S102 - the document's own code, run as the reader would
    assert scope["DONE"] is True
