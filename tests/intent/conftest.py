"""Fixtures for the intent tests: the real tools.json with every tool enabled."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from routing_helpers import all_enabled

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.manifest import Manifest, load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def real_manifest() -> Manifest:
    return all_enabled(load_manifest(tools_json_path()))


@pytest.fixture
def real_registry(real_manifest: Manifest) -> ToolRegistry:
    return ToolRegistry(real_manifest)
