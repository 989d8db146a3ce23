"""Note memory for agents (NOTE-TAKING), stored in Chroma."""
