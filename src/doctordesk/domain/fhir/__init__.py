"""HL7 FHIR R4 as this service speaks it: mapping, errors, Subscriptions."""
