"""Spellings of private addresses that a webhook address must not reach (docs/webhooks.md#addresses)."""

from __future__ import annotations

# 127.0.0.1 (or ::1) however written: inet_aton's forms, a trailing dot, the local names, IPv4-mapped IPv6.
LOOPBACK = [
    "0x7f000001",
    "0x7f.1",
    "127.1",
    "2130706433",
    "0177.0.0.1",
    "017700000001",
    "127.0.0.1.",
    "0",
    "127.000.000.001",
    "localhost.",
    "ip6-localhost",
    "localhost.localdomain",
    "[::ffff:127.0.0.1]",
]
# The cloud metadata address 169.254.169.254 and 10.0.0.1.
OTHER_PRIVATE = ["0xa9fea9fe", "2852039166", "0xa9.0xfe.0xa9.0xfe", "167772161"]
