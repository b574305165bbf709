"""The connect-time address rule's two seams: the resolver keeps only public addresses of a name (and refuses a
name with none), and the socket factory refuses to create a socket for an address that is not public."""

from __future__ import annotations

import errno
import socket

import pytest

from doctordesk.realtime.outbound import PublicOnlyResolver, RefusedAddress, public_only_socket
from tests.support.resolving import TableResolver

TABLE = {
    "mixed.example.com": ["127.0.0.1", "93.184.216.34", "::ffff:10.0.0.1", "2606:4700:4700::1111", "fd00::5"],
    "inside.example.com": ["10.0.0.7", "::ffff:127.0.0.1", "169.254.169.254"],
}


async def test_of_every_record_only_the_public_addresses_are_kept() -> None:
    resolver = PublicOnlyResolver(TableResolver(TABLE))
    found = await resolver.resolve("mixed.example.com", 443, socket.AF_UNSPEC)
    assert [r["host"] for r in found] == ["93.184.216.34", "2606:4700:4700::1111"]


async def test_a_name_with_only_private_addresses_is_refused_naming_them() -> None:
    resolver = PublicOnlyResolver(TableResolver(TABLE))
    with pytest.raises(RefusedAddress) as refused:
        await resolver.resolve("inside.example.com", 443, socket.AF_UNSPEC)
    assert refused.value.errno == errno.EACCES
    assert refused.value.strerror == (
        "not a public address: inside.example.com resolves to 10.0.0.7, ::ffff:127.0.0.1, 169.254.169.254"
    )


@pytest.mark.parametrize(
    ("family", "sockaddr"),
    [
        (socket.AF_INET, ("127.0.0.1", 80)),
        (socket.AF_INET, ("0.0.0.0", 80)),
        (socket.AF_INET, ("169.254.169.254", 80)),
        (socket.AF_INET6, ("::ffff:127.0.0.1", 80, 0, 0)),
        (socket.AF_INET6, ("::1", 80, 0, 0)),
        (socket.AF_INET6, ("fe80::1%lo", 80, 0, 1)),
    ],
)
def test_no_socket_is_made_for_an_address_that_is_not_public(family: int, sockaddr: tuple[object, ...]) -> None:
    with pytest.raises(RefusedAddress):
        public_only_socket((family, socket.SOCK_STREAM, 6, "", sockaddr))  # type: ignore[arg-type]


def test_a_socket_is_made_for_a_public_address() -> None:
    sock = public_only_socket((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)))
    try:
        assert sock.family == socket.AF_INET and sock.type == socket.SOCK_STREAM
    finally:
        sock.close()
