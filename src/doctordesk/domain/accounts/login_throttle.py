"""The rules that throttle failed logins (docs/accounts.md#throttling).

Every login attempt counts twice before its password is checked:
- for the username from this client address: ``address_failures`` in a row lock that address out of that username
  for ``lockout`` (brute force from one place stops; the doctor elsewhere is not affected);
- for the username from every address together: a count that drains by one per ``interval``. At
  ``username_failures`` the username is slowed, not locked: one attempt per ``interval``, shared by every address
  that has not logged in to it successfully within ``KNOWN_ADDRESS`` (attackers spread over many addresses are
  held to that rate; the doctor at a usual place is not held up).
A successful login takes its own count back.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

KNOWN_ADDRESS = timedelta(days=30)
MAX_ADDRESS_CHARS = 64  # the column's width


@dataclass(frozen=True, slots=True)
class LoginLimits:
    address_failures: int
    lockout: timedelta
    username_failures: int
    interval: timedelta


def address_key(host: str | None) -> str:
    """What failures are counted under for a client: an IPv4 address as it is, an IPv6 address by its /64 network
    (one subscriber gets a whole /64, so its single addresses cost nothing to change), anything else (a unix
    socket, an odd value from a trusted proxy) as given, cut to fit."""
    if not host:
        return "unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:MAX_ADDRESS_CHARS]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def drained(failures: int, since: datetime, now: datetime, interval: timedelta) -> tuple[int, datetime]:
    """A username's failure count with one forgiven per whole ``interval`` since ``since``, and the time the
    remainder is counted from."""
    steps = max(0, (now - since) // interval)
    left = max(0, failures - steps)
    return left, since + steps * interval if left else now


def is_known(succeeded_at: datetime | None, now: datetime) -> bool:
    """Whether an address logged in to the username successfully recently enough to skip its slowing."""
    return succeeded_at is not None and now - succeeded_at < KNOWN_ADDRESS


def seconds_until(moment: datetime, now: datetime) -> int:
    """A Retry-After: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil((moment - now).total_seconds()))
