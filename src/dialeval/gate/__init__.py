"""`dialeval gate` and the pytest plugin: thresholds on a run's figures and regressions
against a baseline run, turned into exit codes, JUnit XML and a Markdown summary."""
