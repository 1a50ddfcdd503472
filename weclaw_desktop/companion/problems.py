"""What can go wrong on the phone link, without HTTP: the service raises :class:`Problem`; ``server.py`` maps
its :class:`Kind` to a status code. ``code`` is stable (the phone page translates it; see CODES)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    BAD_REQUEST = "bad_request"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    GONE = "gone"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"
    MISDIRECTED = "misdirected"
    RATE_LIMITED = "rate_limited"
    NO_SPACE = "no_space"
    UNAVAILABLE = "unavailable"


#: Every code a response can carry, and its kind. The phone page has a text for each (tests check zh and en).
CODES: dict[str, Kind] = {
    "bad_request": Kind.BAD_REQUEST,
    "bad_json": Kind.BAD_REQUEST,
    "too_deep": Kind.BAD_REQUEST,
    "bad_id": Kind.BAD_REQUEST,
    "size_mismatch": Kind.BAD_REQUEST,
    "damaged": Kind.BAD_REQUEST,
    "slow": Kind.BAD_REQUEST,
    "too_large": Kind.TOO_LARGE,
    "too_many": Kind.TOO_LARGE,
    "unsupported_type": Kind.UNSUPPORTED,
    "bad_origin": Kind.FORBIDDEN,
    "bad_host": Kind.MISDIRECTED,
    "invalid": Kind.UNAUTHENTICATED,
    "session": Kind.UNAUTHENTICATED,
    "auth": Kind.UNAUTHENTICATED,
    "replay": Kind.UNAUTHENTICATED,
    "unknown": Kind.UNAUTHENTICATED,
    "revoked": Kind.UNAUTHENTICATED,
    "expired": Kind.UNAUTHENTICATED,
    "declined": Kind.FORBIDDEN,
    "timeout": Kind.FORBIDDEN,
    "rate_limited": Kind.RATE_LIMITED,
    "busy": Kind.RATE_LIMITED,
    "not_found": Kind.NOT_FOUND,
    "order": Kind.CONFLICT,
    "cancelled": Kind.GONE,
    "finished": Kind.GONE,
    "changed": Kind.GONE,
    "no_space": Kind.NO_SPACE,
    "quota": Kind.NO_SPACE,
    "reserve": Kind.NO_SPACE,
    "keys_lost": Kind.UNAVAILABLE,
    "internal": Kind.UNAVAILABLE,
}


class Problem(Exception):
    """A refusal with a stable code and an English message for people (the page shows its own translation)."""

    def __init__(self, code: str, message: str, *, retry_after: float = 0.0, **data: Any) -> None:
        if code not in CODES:
            raise ValueError(f"unknown problem code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.kind = CODES[code]
        self.retry_after = retry_after
        self.data = data

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "code": self.code, **self.data}
