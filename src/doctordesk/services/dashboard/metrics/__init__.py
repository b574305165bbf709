"""One module per dashboard metric (docs/dashboard.md#adding-a-metric)."""
