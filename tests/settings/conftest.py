"""Settings tests: real settings.json files in the test's WECLAW_HOME (the root conftest isolates it)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE.parent / "ui", HERE):  # tests/ (fakeopenai, helpers), tests/ui (uihelpers)
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
