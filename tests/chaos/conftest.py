"""Chaos tests: crashes and faults as real processes (see chaos_support.py)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE):  # tests/ (fakeopenai) and tests/chaos (chaos_support)
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
