"""The integration API under /integration/v1 and the plain JSON read API."""
