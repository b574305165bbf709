"""The layout checks tests/unit/test_architecture.py runs: the import graph (imports.py), the rules (checks.py)."""
