"""The built-in tool catalogue: one module per tool, declared in tools.json."""
