"""The audit log: its one writer (``entries``), administrative changes with their before and after (``changes``)
and the trail read back (``trail``)."""
