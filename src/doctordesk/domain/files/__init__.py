"""Attachments: the allowed types, and checking PDFs and images with real parsers."""
