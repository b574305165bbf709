"""The spec's rules as plain Python: no web, database or pydantic imports."""
