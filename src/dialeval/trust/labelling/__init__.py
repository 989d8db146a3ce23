"""`dialeval label`: people label conversations on a rubric in the browser (127.0.0.1 only);
the labels go to a JSONL file in the format ``--labels`` reads (docs/trust.md)."""
