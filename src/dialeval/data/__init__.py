"""Schemas and loaders for each benchmark's files; bad input names file, record and field."""
