"""One module per benchmark: binds its data loader, graph and metrics for the runner."""
