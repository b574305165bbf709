"""Account rules: password hashing and login throttling."""
