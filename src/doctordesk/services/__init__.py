"""Use cases: one function per user action, one transaction each, events published after commit."""
