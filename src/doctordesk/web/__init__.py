"""The HTTP edge: thin routers, dependencies, the error table and the static web app."""
