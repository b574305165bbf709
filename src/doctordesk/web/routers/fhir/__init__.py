"""The FHIR R4 interface under /fhir: routes and its HTTP edge."""
