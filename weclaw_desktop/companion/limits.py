"""The phone link's abuse bounds in one place (tests make them small)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Abuse bounds (per device unless said otherwise). Tests make them small."""

    pair_failures_per_min: int = 10  # wrong pairing proofs per source address
    hellos_per_min: int = 120  # session challenges per source address
    requests_per_device: int = 16  # requests of one device at the same time
    connections_total: int = 128
    connections_per_source: int = 32
    header_timeout_s: float = 10.0
    body_idle_s: float = 20.0  # a request body that sends nothing for this long is dropped
    max_files_per_upload: int = 500
    reserve_bytes: int = 8 << 30  # declared but not yet sent
    daily_bytes: int = 64 << 30  # saved + partial + reserved within 24 hours
