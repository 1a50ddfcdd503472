"""The agent: provider (openai SDK), the turn loop, typed events, history and audit in SQLite."""
