"""Built-in tools, one module per tool (declared in tools.json)."""
