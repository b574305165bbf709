"""Hosts of outgoing requests: IPv4 in every form inet_aton takes (checked against the system's inet_aton), IPv6
literals, host names (RFC 1123, IDNA), the local names, and which addresses are public."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctordesk.domain.webhooks import addresses
from doctordesk.domain.webhooks.addresses import NotAHost, is_public, parse_host, parse_ipv4

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")


def encode(value: int, base: int) -> str:
    """One part of an inet_aton address in ``base`` (8: a leading 0, 16: 0x)."""
    if base == 16:
        return hex(value)
    if base == 8:
        return "0" + format(value, "o")
    return str(value)


@st.composite
def spellings(draw: st.DrawFn) -> tuple[int, str]:
    """An IPv4 address as a number, and one of its spellings: one to four parts, each in any base."""
    number = draw(st.integers(0, 2**32 - 1))
    count = draw(st.integers(1, 4))
    octets = list(number.to_bytes(4, "big"))
    leading = octets[: count - 1]
    last = int.from_bytes(bytes(octets[count - 1 :]), "big")
    parts = [encode(v, draw(st.sampled_from([8, 10, 16]))) for v in [*leading, last]]
    text = ".".join(parts)
    if draw(st.booleans()):
        text = text.upper()
    return number, text


@given(spellings(), st.booleans())
def test_any_spelling_of_an_ipv4_address_parses_to_that_address(spelling: tuple[int, str], dot: bool) -> None:
    number, text = spelling
    expected = ipaddress.IPv4Address(number)
    assert parse_ipv4(text) == expected
    host = parse_host(text + ("." if dot else ""))
    assert host.address == expected and host.name is None
    assert host.canonical == (text == str(expected) and not dot)


@given(st.text(alphabet="0123456789abcdefxX.", min_size=1, max_size=24))
def test_the_parser_reads_what_the_systems_inet_aton_reads(text: str) -> None:
    try:
        system = ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        system = None
    ours = parse_ipv4(text)
    if system is not None:
        assert ours == system
    elif ours is not None:
        # The only texts taken here and not by glibc: a trailing dot and a bare "0x" part (read as 0, as
        # browsers do) — both only ever make more hosts count as addresses.
        assert text.endswith(".") or any(p.lower() == "0x" for p in text.split("."))


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("127.000.000.001", "127.0.0.1"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("167772161", "10.0.0.1"),
        ("0XA9.254.0Xa9fe", "169.254.169.254"),
        ("10.0x10203", "10.1.2.3"),
        ("010.0.0.1", "8.0.0.1"),
    ],
)
def test_the_spellings_seen_in_attacks_are_the_addresses_a_resolver_reads(text: str, address: str) -> None:
    assert parse_host(text).address == ipaddress.IPv4Address(address)
    assert not is_public(ipaddress.IPv4Address(address)) or address == "8.0.0.1"


@pytest.mark.parametrize(
    "text", ["256.0.0.1", "1.2.3.4.5", "08", "0x100000000", "4294967296", "1.16777216", "1.2.65536", "1..2", "a.1"]
)
def test_a_host_ending_in_a_number_that_is_no_address_is_refused_not_taken_as_a_name(text: str) -> None:
    with pytest.raises(NotAHost) as refused:
        parse_host(text)
    assert refused.value.numeric


@pytest.mark.parametrize(
    ("text", "address"),
    [("::1", "::1"), ("::ffff:127.0.0.1", "::ffff:7f00:1"), ("2001:DB8::1", "2001:db8::1")],
)
def test_ipv6_literals_are_addresses(text: str, address: str) -> None:
    assert parse_host(text).address == ipaddress.IPv6Address(address)


@pytest.mark.parametrize("text", ["fe80::1%eth0", "::ffff::1", "1:2:3:4:5:6:7:8:9"])
def test_bad_or_zoned_ipv6_literals_are_refused(text: str) -> None:
    with pytest.raises(NotAHost):
        parse_host(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hooks.Example.org", "hooks.example.org"),
        ("hooks.example.org.", "hooks.example.org"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("a-1.b2.example", "a-1.b2.example"),
        ("1a.example", "1a.example"),
    ],
)
def test_host_names_are_read_in_their_ascii_form(text: str, name: str) -> None:
    host = parse_host(text)
    assert (host.address, host.name) == (None, name)


@pytest.mark.parametrize(
    "text",
    [
        "a_b.example",
        "-a.example",
        "a-.example",
        "a..example",
        "x" * 64 + ".example",
        "a." * 127 + "ab",
        "☃\u200d.example",
        "a.1a",
        "example.0x7g",
    ],
)
def test_names_that_are_not_valid_host_names_are_refused(text: str) -> None:
    with pytest.raises(NotAHost) as refused:
        parse_host(text)
    assert not refused.value.numeric


@pytest.mark.parametrize(
    "name",
    [
        "localhost",
        "LOCALHOST.",
        "api.localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "ip6-allnodes",
        "printer.local",
        "db.internal",
        "nas.home.arpa",
    ],
)
def test_local_names_are_local_with_or_without_a_trailing_dot(name: str) -> None:
    assert parse_host(name).is_local_name


@pytest.mark.parametrize("name", ["example.org", "localhost.example.org", "internal.example.org"])
def test_ordinary_names_are_not_local(name: str) -> None:
    assert not parse_host(name).is_local_name


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "192.0.0.8",
        "192.0.2.1",
        "198.18.0.1",
        "::",
        "::1",
        "fd00::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "ff0e::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "::127.0.0.1",
        "::10.0.0.1",
        "2002:7f00:1::1",
        "2002:a00:1::",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::1",
        "2001:db8::1",
    ],
)
def test_addresses_that_are_not_globally_routable_are_not_public(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1", "64:ff9b::808:808"],
)
def test_globally_routable_addresses_are_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


def test_an_address_as_a_socket_gives_it_may_carry_a_zone() -> None:
    assert addresses.address_of("fe80::1%eth0") == ipaddress.IPv6Address("fe80::1")
    assert addresses.address_of("example.org") is None
