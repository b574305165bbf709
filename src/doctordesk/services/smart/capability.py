"""What the server tells SMART apps about itself: the discovery document (``.well-known/smart-configuration``) and
the CapabilityStatement's ``rest.security`` (docs/smart.md#discovery)."""

from __future__ import annotations

from typing import Any

from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import ASSERTION_ALGORITHMS

CAPABILITIES = [
    "launch-standalone",
    "launch-ehr",
    "client-public",
    "client-confidential-symmetric",
    "client-confidential-asymmetric",
    "context-standalone-patient",
    "context-ehr-patient",
    "permission-patient",
    "permission-user",
    "permission-v2",
    "permission-offline",
    "sso-openid-connect",
]
SCOPES_SUPPORTED = [
    "openid",
    "fhirUser",
    smart_scopes.LAUNCH,
    smart_scopes.LAUNCH_PATIENT,
    smart_scopes.OFFLINE,
    smart_scopes.ONLINE,
    "patient/Appointment.rs",
    "patient/Patient.rs",
    "patient/*.rs",
    "user/Appointment.cruds",
    "user/Patient.rs",
    "user/*.cruds",
    "system/Appointment.rs",
    "system/Patient.rs",
    "system/*.rs",
]
SMART_SERVICE = {
    "system": "http://terminology.hl7.org/CodeSystem/restful-security-service",
    "code": "SMART-on-FHIR",
    "display": "SMART-on-FHIR",
}
OAUTH_URIS = "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris"


def endpoints(base_url: str) -> dict[str, str]:
    return {
        "authorization_endpoint": f"{base_url}/oauth/authorize",
        "token_endpoint": f"{base_url}/oauth/token",
        "revocation_endpoint": f"{base_url}/oauth/revoke",
        "jwks_uri": f"{base_url}/oauth/jwks",
    }


def smart_configuration(base_url: str) -> dict[str, Any]:
    """The discovery document for the FHIR base ``{base_url}/fhir``."""
    return {
        "issuer": base_url,
        **endpoints(base_url),
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "response_types_supported": ["code"],
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none",
        ],
        "token_endpoint_auth_signing_alg_values_supported": list(ASSERTION_ALGORITHMS),
        "code_challenge_methods_supported": ["S256"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": SCOPES_SUPPORTED,
        "capabilities": CAPABILITIES,
    }


# What an id token of ours holds (services/smart/keys.id_token).
CLAIMS_SUPPORTED = ["iss", "sub", "aud", "iat", "exp", "nonce", "fhirUser"]


def openid_configuration(base_url: str) -> dict[str, Any]:
    """OpenID Connect discovery for the issuer ``base_url`` (``{issuer}/.well-known/openid-configuration``): the
    same issuer, endpoints, grants, client authentication, PKCE and scopes as SMART's document, with what OpenID
    Connect requires beside (subject types, response modes, claims). No userinfo endpoint: the id token carries
    ``fhirUser`` (docs/smart.md#discovery)."""
    smart = smart_configuration(base_url)
    del smart["capabilities"]
    return {
        **smart,
        "subject_types_supported": ["public"],
        "response_modes_supported": ["query"],
        "claims_supported": CLAIMS_SUPPORTED,
        "claims_parameter_supported": False,
        "request_parameter_supported": False,
        "request_uri_parameter_supported": False,
    }


def rest_security(base_url: str) -> dict[str, Any]:
    """The CapabilityStatement's ``rest.security``: SMART on FHIR, with the OAuth URIs extension."""
    uris = endpoints(base_url)
    return {
        "cors": False,
        "service": [{"coding": [SMART_SERVICE], "text": "SMART App Launch (OAuth 2)"}],
        "extension": [
            {
                "url": OAUTH_URIS,
                "extension": [
                    {"url": "authorize", "valueUri": uris["authorization_endpoint"]},
                    {"url": "token", "valueUri": uris["token_endpoint"]},
                    {"url": "revoke", "valueUri": uris["revocation_endpoint"]},
                ],
            }
        ],
        "description": "A SMART app's access token (ddat_..., scopes checked on every interaction), a user's "
        "access token (POST /auth/login) or a service account's API key (also accepted in X-Api-Key).",
    }
