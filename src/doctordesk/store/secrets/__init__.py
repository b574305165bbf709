"""Secrets at rest (docs/operations.md#secrets-at-rest): the keys and the sealed column type (``encryption``), and
the checks and re-encryption of the rows that hold them (``rows``)."""
