"""Routing: which tools a request needs (progressive exposure)."""
