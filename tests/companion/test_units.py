"""Small pure parts of the phone link: safe names, address choice, pairing codes, rate limits, records, bounds."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from fakeclock import FakeClock

from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion import wire
from weclaw_desktop.companion.network import candidate_interfaces, choose_address, default_route_address
from weclaw_desktop.companion.pairing import PairingCodes, RateLimiter
from weclaw_desktop.companion.problems import Problem
from weclaw_desktop.companion.qr import qr_png
from weclaw_desktop.companion.sessions import Challenges, Session
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


def test_pairing_codes_only_the_newest_works_once_and_expires() -> None:
    """The secret travels only in the URL fragment; a new code invalidates the old; one use; 5 minutes."""
    clock = FakeClock()
    codes = PairingCodes(ttl_s=300, clock=clock.time)
    a = codes.new("http://x:1")
    assert a.url == f"http://x:1/#s={c.b64e(a.secret)}" and len(a.secret) == 32
    assert a.pid == c.pairing_id(a.secret) and a.pid not in a.url
    b = codes.new("http://x:1")
    assert codes.find(a.pid) is None and codes.find(b.pid) is b
    assert codes.consume(b) and not codes.consume(b) and codes.find(b.pid) is None
    late = codes.new("http://x:1")
    clock.advance(301)
    assert codes.find(late.pid) is None and not codes.consume(late)
    assert late.seconds_left(clock.time()) == 0


def test_rate_limiter_window_on_an_injected_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, 60.0, clock.monotonic)
    assert limiter.allow("ip")[0] and limiter.allow("ip")[0]
    allowed, wait = limiter.allow("ip")
    assert not allowed and 0 < wait <= 60
    assert limiter.allow("other")[0] and limiter.recent("ip") and not limiter.recent("nobody")
    clock.advance(61)
    assert limiter.allow("ip")[0]


def test_challenges_are_ours_fresh_and_single_use() -> None:
    clock = FakeClock()
    ch = Challenges(clock.time)
    one = ch.mint()
    assert ch.redeem(one) is not None and ch.redeem(one) is None
    assert Challenges(clock.time).redeem(ch.mint()) is None  # another process's (another key)
    forged = c.b64e(c.b64d(ch.mint())[:16] + b"\0" * 16)
    assert ch.redeem(forged) is None
    old = ch.mint()
    clock.advance(61)
    assert ch.redeem(old) is None


def test_lanes_take_only_growing_sequence_numbers() -> None:
    s = Session("s", "d", 1, b"", b"", b"", 0.0, 0.0)
    assert s.take("ctl", 1) == "ok" and s.take("ctl", 1) == "replay" and s.take("ctl", 0) == "replay"
    assert s.take("ctl", 7) == "ok" and s.take("ctl", 5) == "replay" and s.take("dl:x", 1) == "ok"


def test_records_seal_and_open_and_refuse_changes() -> None:
    key = os.urandom(32)
    data = os.urandom(2 * c.RECORD + 17)
    sealer = c.RecordSealer(key, "f1", len(data))
    sealed = [sealer.seal(i, data[i * c.RECORD : (i + 1) * c.RECORD]) for i in range(3)]
    opener = c.RecordSealer(key, "f1", len(data), sealer.salt)
    assert b"".join(opener.open(i, r) for i, r in enumerate(sealed)) == data
    bad = bytearray(sealed[1])
    bad[-1] ^= 1
    for i, rec in [(1, bytes(bad)), (0, sealed[1]), (2, sealed[2][:-1])]:
        with pytest.raises(c.CryptoError):
            opener.open(i, rec)
    with pytest.raises(c.CryptoError):
        c.RecordSealer(key, "f1", len(data), os.urandom(16)).open(0, sealed[0])  # another response's key
    assert c.record_count(0) == 1 and c.record_len(0, 0) == 0 and c.record_count(c.RECORD) == 1


def test_json_depth_and_size_are_bounded_without_recursion() -> None:
    assert wire.json_depth_ok(b'{"a": [1, {"b": "[[[[[[[[[[["}]}')
    assert not wire.json_depth_ok(b"[" * 9 + b"]" * 9)
    for raw, code in [
        (b"[" * 1000, "too_deep"),
        (b"x" * 70_000, "too_large"),
        (b"[]", "bad_json"),
        (b"\xff", "bad_json"),
    ]:
        with pytest.raises(Problem) as p:
            wire.parse_json_object(raw)
        assert p.value.code == code


def test_every_problem_code_has_a_status() -> None:
    from weclaw_desktop.companion.http_base import STATUS
    from weclaw_desktop.companion.problems import CODES

    assert {k for k in CODES.values()} <= set(STATUS)
    with pytest.raises(ValueError):
        Problem("made_up", "x")


def test_qr_png_is_a_png() -> None:
    png = qr_png("http://192.168.1.20:8765/#s=" + "A" * 43)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200


async def test_plain_tests_run_without_qt() -> None:
    assert type(asyncio.get_running_loop()).__module__.startswith("asyncio")
