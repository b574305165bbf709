"""FHIR Bulk Data export (docs/fhir.md#bulk-export)."""
