"""Screens: the protocol (pages, update sets, errors) and one module per screen."""
