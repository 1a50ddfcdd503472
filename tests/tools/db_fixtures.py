"""Fixtures for the memory, todo, reminder and email tools: the real tools.json, dispatcher and weclaw.db.

These tools keep their data in the real weclaw.db, so their ``ctx`` differs from the one in
tests/tools/conftest.py; each of their folders' conftest.py imports these fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tools.db_support import Caller

from weclaw_desktop.paths import app_paths
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit import ToolContext
from weclaw_desktop.toolkit.base import Origin
from weclaw_desktop.tools._db import forget_database, shared_database


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    return root


@pytest.fixture
def ctx(files_root: Path, weclaw_home: Path) -> Iterator[ToolContext]:
    """The context the runtime would build: this test's folders and its one shared weclaw.db."""
    paths = app_paths().ensure()
    context = ToolContext(
        origin=Origin.GUI,
        data_dir=paths.data,
        outputs_dir=paths.outputs,
        db=shared_database(paths.database),
        allowed_roots=[files_root],
    )
    yield context
    forget_database(paths.database)


@pytest.fixture
def db(ctx: ToolContext) -> Database:
    """The same Database object the tools use for this test's weclaw.db."""
    assert ctx.db is not None
    return ctx.db


@pytest.fixture
def make_caller(ctx: ToolContext) -> Callable[..., Caller]:
    def build(config: dict[str, dict[str, Any]] | None = None) -> Caller:
        return Caller(ctx, config)

    return build


@pytest.fixture
def call(make_caller: Callable[..., Caller]) -> Caller:
    return make_caller()
