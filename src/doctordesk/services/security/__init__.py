"""One's own security page: it shows and changes what accounts (sessions, phones, passkeys, the authenticator app,
recovery codes) and SMART (the apps one allowed) hold for the user, so it sits above both."""
