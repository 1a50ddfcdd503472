"""Fixtures for the web, system_info, datetime, calculator, clipboard, notify, screen and open tools."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolrun import Run

from weclaw_desktop.toolkit import ToolContext


@pytest.fixture
def ctx(home: Path, tmp_path: Path) -> ToolContext:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    return ToolContext(outputs_dir=outputs, data_dir=tmp_path / "data", db=None, allowed_roots=[home])


@pytest.fixture
def run(ctx: ToolContext) -> Run:
    return Run(ctx)
