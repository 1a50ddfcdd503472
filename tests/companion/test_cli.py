"""``weclaw phone`` without a window."""

from __future__ import annotations

from pathlib import Path

import pytest

from weclaw_desktop.cli import main


def test_send_without_a_paired_phone_says_how_to_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "a.txt"
    f.write_text("hi")
    assert main(["phone", "--host", "127.0.0.1", "--port", "0", "--send", str(f)]) == 1
    assert "No phone is paired yet" in capsys.readouterr().err
