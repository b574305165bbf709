"""The FHIR interface's use cases: one module per resource, plus search, access and capability."""
