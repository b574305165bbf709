"""Thin routers: parse, call one service, return a screen result."""
