"""Subcommands of ``weclaw``; each module has ``register(subparsers)`` and sets ``run``."""
