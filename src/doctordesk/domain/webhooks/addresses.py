"""Hosts of outgoing requests as rules (docs/webhooks.md#addresses): what a URL's host names (read the way the
system's resolver reads it, ``inet_aton``'s IPv4 forms included), whether an address is public, and which names
are local by definition. Pure: nothing here resolves a name."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_NAME_CHARS = 253
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
# A last label that makes the host an IPv4 address (WHATWG's "ends in a number", and RFC 1123: a host name's
# top-level label is never all digits).
_NUMBER = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")
_PART = re.compile(r"^(?:0x(?P<hex>[0-9a-f]*)|(?P<oct>0[0-7]*)|(?P<dec>[1-9][0-9]*))$")

# Names that are local by definition, whatever a resolver says: RFC 6761 ``localhost`` and its subdomains, the
# names /etc/hosts gives the loopback and IPv6 multicast addresses on Debian and others, and the special-use and
# private-use suffixes (RFC 6762 ``.local``, RFC 8375 ``home.arpa``, ICANN's ``.internal``, ``.localdomain``).
LOCAL_NAMES = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "ip6-localnet",
        "ip6-mcastprefix",
        "ip6-allnodes",
        "ip6-allrouters",
        "ip6-allhosts",
    }
)
LOCAL_SUFFIXES = (".localhost", ".localdomain", ".local", ".internal", ".home.arpa")

# Ranges ``ipaddress`` counts as global that no webhook receiver can be at: site-local IPv6 (deprecated, but
# routed inside sites), NAT64's local-use prefix, and the IETF protocol assignments of IPv4.
_NOT_PUBLIC = (
    ipaddress.ip_network("fec0::/10"),
    ipaddress.ip_network("64:ff9b:1::/48"),
    ipaddress.ip_network("192.0.0.0/24"),
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class NotAHost(ValueError):
    """The text is neither a valid host name nor an IP address (``numeric``: it looked like an IPv4 address)."""

    def __init__(self, text: str, *, numeric: bool = False) -> None:
        super().__init__(text)
        self.numeric = numeric


@dataclass(frozen=True, slots=True)
class Host:
    """A URL's host as a connection would read it: an address, or an ASCII host name (lower case, without the
    trailing dot). ``canonical``: written the one usual way (dotted decimal IPv4, a name without a trailing dot)."""

    address: IPAddress | None
    name: str | None
    canonical: bool

    @property
    def is_local_name(self) -> bool:
        return self.name is not None and is_local_name(self.name)


def parse_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any form ``inet_aton`` takes (one to four parts, each decimal, octal or hex; the last
    part fills the bits left), with an optional trailing dot; None if the text is not one."""
    text = text.lower().removesuffix(".")
    parts = text.split(".")
    if not text or len(parts) > 4:
        return None
    values: list[int] = []
    for part in parts:
        match = _PART.match(part)
        if match is None:
            return None
        if (digits := match["hex"]) is not None:
            values.append(int(digits, 16) if digits else 0)
        elif (digits := match["oct"]) is not None:
            values.append(int(digits, 8))
        else:
            values.append(int(match["dec"]))
    *leading, last = values
    if any(v > 0xFF for v in leading) or last >= 1 << (8 * (5 - len(values))):
        return None
    number = last
    for i, value in enumerate(leading):
        number |= value << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def parse_host(raw: str) -> Host:
    """What a URL's host (as ``urlsplit(...).hostname`` gives it: without brackets) names; NotAHost otherwise."""
    text = raw.lower()
    if ":" in text:
        if "%" in text:
            raise NotAHost(raw)  # a zone belongs to one machine's interfaces
        try:
            return Host(ipaddress.IPv6Address(text), None, canonical=True)
        except ValueError:
            raise NotAHost(raw) from None
    bare = text.removesuffix(".")
    if _NUMBER.match(bare.rsplit(".", 1)[-1]):
        address = parse_ipv4(text)
        if address is None:
            raise NotAHost(raw, numeric=True)
        return Host(address, None, canonical=text == str(address))
    return Host(None, host_name(bare), canonical=bare == text)


def host_name(text: str) -> str:
    """A host name as it goes on the wire: IDNA (UTS 46) for a Unicode name, then RFC 1123 labels; NotAHost."""
    if not text.isascii():
        try:
            text = idna.encode(text, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            raise NotAHost(text) from None
    labels = text.split(".")
    if not text or len(text) > MAX_NAME_CHARS or not all(_LABEL.match(label) for label in labels):
        raise NotAHost(text)
    if not labels[-1][0].isalpha():  # RFC 1123 2.1: the top-level label is alphabetic
        raise NotAHost(text)
    return text


def is_local_name(name: str) -> bool:
    """A name that stands for this machine or its local network, whatever DNS says (lower case, no trailing
    dot)."""
    return name in LOCAL_NAMES or name.endswith(LOCAL_SUFFIXES)


def is_public(address: IPAddress) -> bool:
    """Globally routable unicast: not loopback, private, link-local (the cloud metadata address 169.254.169.254
    included), unspecified, shared (CGNAT), multicast, reserved, documentation, unique- or site-local. An IPv6
    address that carries an IPv4 one (mapped ``::ffff:a.b.c.d``, compatible ``::a.b.c.d``, 6to4 ``2002::/16``,
    NAT64 ``64:ff9b::/96``) is public only when that IPv4 address is."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public(embedded)
    if address.is_multicast or address.is_unspecified or address.is_loopback or address.is_link_local:
        return False
    if any(address in network for network in _NOT_PUBLIC if network.version == address.version):
        return False
    return address.is_global


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if int(address) >> 32 == 0 and int(address) > 1:  # IPv4-compatible (deprecated); :: and ::1 are themselves
        return ipaddress.IPv4Address(int(address))
    return None


def address_of(text: str) -> IPAddress | None:
    """An address as a resolver or socket gives it (``127.0.0.1``, ``::1``, ``fe80::1%eth0``); None if it is not
    one."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
