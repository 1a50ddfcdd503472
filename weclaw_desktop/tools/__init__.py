"""The built-in tool catalogue: one module (or package) per tool, declared in tools.json."""
