"""The clinic dashboard (docs/dashboard.md): figures of the last 90 days computed in SQL, drawn as charts."""
