"""A software passkey (WebAuthn platform authenticator with user verification) for tests in process: it answers
the service's registration and sign-in options as a browser's ``toJSON()`` would, with a P-256 key and attestation
``none``."""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from base64 import urlsafe_b64decode, urlsafe_b64encode
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP_UV = 0x01 | 0x04
ATTESTED = 0x40


def b64(data: bytes) -> str:
    return urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SoftPasskey:
    """One credential for one relying party (``origin`` as the browser would report it)."""

    origin: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    user_handle: bytes = b""
    count: int = 0

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}).encode()

    def _cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def create(self, public_key: dict[str, Any]) -> str:
        """The credential JSON for ``POST /auth/passkeys`` from the options' ``publicKey``."""
        self.user_handle = unb64(public_key["user"]["id"])
        rp_hash = hashlib.sha256(public_key["rp"]["id"].encode()).digest()
        attested = bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + self._cose_key()
        auth_data = rp_hash + bytes([UP_UV | ATTESTED]) + struct.pack(">I", self.count) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", public_key["challenge"])
        response = {
            "clientDataJSON": b64(client_data),
            "attestationObject": b64(attestation),
            "transports": ["internal"],
        }
        return self._json(response)

    def get(self, public_key: dict[str, Any]) -> str:
        """The assertion JSON for a sign-in (or re-authentication) challenge's ``publicKey``."""
        self.count += 1
        rp_hash = hashlib.sha256(public_key["rpId"].encode()).digest()
        auth_data = rp_hash + bytes([UP_UV]) + struct.pack(">I", self.count)
        client_data = self._client_data("webauthn.get", public_key["challenge"])
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        response = {
            "clientDataJSON": b64(client_data),
            "authenticatorData": b64(auth_data),
            "signature": b64(signature),
            "userHandle": b64(self.user_handle),
        }
        return self._json(response)

    def _json(self, response: dict[str, Any]) -> str:
        cid = b64(self.credential_id)
        return json.dumps(
            {
                "id": cid,
                "rawId": cid,
                "type": "public-key",
                "response": response,
                "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
            }  # fmt: skip
        )
