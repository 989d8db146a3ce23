"""Test helpers that ship with dialeval: scripted chat models, the dry-run model and a
small OpenAI-compatible server, so users can test their own configs offline too."""
