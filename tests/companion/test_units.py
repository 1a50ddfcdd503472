"""Small pure parts of the phone link: safe file names, address choice, pairing codes, rate limiting."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from weclaw_desktop.companion.network import candidate_interfaces, choose_address, default_route_address
from weclaw_desktop.companion.pairing import PairingCodes, RateLimiter
from weclaw_desktop.companion.qr import qr_png
from weclaw_desktop.companion.transfers import safe_name, unique_destination


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\Windows\\system.ini", "system.ini"),
        ("a<b>c:d|e?.txt", "abcde.txt"),
        ("  .hidden. ", "hidden"),
        ("CON.txt", "_CON.txt"),
        ("nul", "_nul"),
        ("", "file"),
        ("..", "file"),
        ("bad\x00\x1fname.pdf", "badname.pdf"),
        ("照片 2026.jpg", "照片 2026.jpg"),
    ],
)
def test_safe_name(raw: str, safe: str) -> None:
    assert safe_name(raw) == safe


def test_safe_name_keeps_the_extension_when_shortening() -> None:
    name = safe_name("长" * 300 + ".jpeg")
    assert name.endswith(".jpeg") and len(name.encode()) <= 200


def test_unique_destination_never_reuses_a_name(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1")
    (tmp_path / "a (2).txt").write_text("2")
    assert unique_destination(tmp_path, "a.txt").name == "a (3).txt"
    assert unique_destination(tmp_path, "b.txt").name == "b.txt"


def test_address_choice_prefers_the_users_pick_if_it_exists() -> None:
    assert choose_address("127.0.0.1") == "127.0.0.1"
    fallback = choose_address("203.0.113.77")  # not an address of this machine
    assert fallback != "203.0.113.77"
    default = default_route_address()
    if default is not None:
        assert fallback == default
        assert candidate_interfaces()[0].address == default and candidate_interfaces()[0].is_default
    assert any(i.address == "127.0.0.1" for i in candidate_interfaces(include_loopback=True))
    assert not any(i.address.startswith("127.") for i in candidate_interfaces())


def test_pairing_codes_are_single_use_and_expire() -> None:
    codes = PairingCodes(ttl_s=300)
    a, b = codes.new("http://x:1"), codes.new("http://x:1")
    assert a.token != b.token and a.url == f"http://x:1/#t={a.token}"
    assert 299 <= a.seconds_left() <= 300
    assert codes.consume(a.token) and not codes.consume(a.token)
    assert not codes.consume("made-up")
    short = PairingCodes(ttl_s=0.01)
    c = short.new("http://x:1")
    time.sleep(0.02)
    assert not short.consume(c.token)


def test_rate_limiter_window() -> None:
    limiter = RateLimiter(2, 0.05)
    assert limiter.allow("ip")[0] and limiter.allow("ip")[0]
    allowed, wait = limiter.allow("ip")
    assert not allowed and 0 < wait <= 0.05
    assert limiter.allow("other")[0]
    time.sleep(0.06)
    assert limiter.allow("ip")[0]


def test_qr_png_is_a_png() -> None:
    png = qr_png("http://192.168.1.20:8765/#t=abc")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200


async def test_plain_tests_run_without_qt() -> None:
    assert type(asyncio.get_running_loop()).__module__.startswith("asyncio")
