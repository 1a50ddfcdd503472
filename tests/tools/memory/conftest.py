"""The memory tool keeps its data in weclaw.db: the database-backed fixtures (tests/tools/db_fixtures.py)."""

from tools.db_fixtures import call, ctx, db, files_root, make_caller

__all__ = ["call", "ctx", "db", "files_root", "make_caller"]
