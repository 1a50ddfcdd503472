"""The phone link's wire rules that are not cryptography: bounded JSON, the request-authentication header,
lanes, and the strings each MAC and envelope covers. Shared by the service and the HTTP layer; no I/O.

A request is authenticated by ``X-WeClaw-Auth: <session>.<lane>.<seq>.<mac>`` where
``mac = HMAC(session mac key, "req", method, path?query, lane, seq, body digest)``. A lane is one thing the
page does in order (``ctl`` for control calls, ``ev`` for the event stream, ``dl:<file>`` per download,
``up:<file>`` per upload); within a lane the sequence number must grow, so a replayed or reordered request
fails while independent lanes run at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from weclaw_desktop.companion.crypto import VERSION, CryptoError, b64d
from weclaw_desktop.companion.problems import Problem

MAX_JSON = 64 * 1024
MAX_DEPTH = 8
AUTH_HEADER = "X-WeClaw-Auth"
LANE = re.compile(r"^(ctl|ev|dl:[A-Za-z0-9_-]{1,64}|up:[A-Za-z0-9_-]{1,64})$")
SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")
ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_SEQ = 2**53 - 1  # what a JavaScript number holds exactly


@dataclass(frozen=True)
class AuthHeader:
    session: str
    lane: str
    seq: int
    mac: bytes


def parse_auth(value: str) -> AuthHeader | None:
    parts = value.split(".")
    if len(parts) != 4 or not SESSION_ID.match(parts[0]) or not LANE.match(parts[1]) or not parts[2].isdigit():
        return None
    seq = int(parts[2]) if len(parts[2]) <= 16 else -1
    if not 0 < seq <= MAX_SEQ:
        return None
    try:
        tag = b64d(parts[3], 32)
    except CryptoError:
        return None
    return AuthHeader(parts[0], parts[1], seq, tag)


def request_parts(method: str, path: str, lane: str, seq: int, body_digest: str) -> tuple[str, ...]:
    return (f"{VERSION}/req", method.upper(), path, lane, str(seq), body_digest)


def request_ad(method: str, path: str, lane: str, seq: int) -> str:
    return f"{VERSION}/req|{method.upper()}|{path}|{lane}|{seq}"


def response_ad(lane: str, seq: int, status: int) -> str:
    return f"{VERSION}/resp|{lane}|{seq}|{status}"


def json_depth_ok(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Nesting depth of JSON text without parsing it (json.loads recurses and would raise RecursionError)."""
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """A JSON object from a request body, or a Problem (400/413), never an unhandled exception."""
    if len(raw) > MAX_JSON:
        raise Problem("too_large", f"The request body is larger than {MAX_JSON // 1024} KB.")
    if not json_depth_ok(raw):
        raise Problem("too_deep", f"The JSON is nested more than {MAX_DEPTH} levels deep.")
    try:
        data = json.loads(raw.decode("utf-8") if raw else "{}")
    except (ValueError, UnicodeDecodeError):
        raise Problem("bad_json", "The body must be JSON.") from None
    if not isinstance(data, dict):
        raise Problem("bad_json", "The body must be a JSON object.")
    return data


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def text(data: dict[str, Any], key: str, *, limit: int = 300, required: bool = True) -> str:
    value = data.get(key, "")
    if not isinstance(value, str) or len(value) > limit or (required and not value):
        raise Problem("bad_request", f"'{key}' must be a text of at most {limit} characters.")
    return value


def ident(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not ID.match(value):
        raise Problem("bad_id", f"'{key}' must use only letters, digits, '-' and '_' (at most 64).")
    return value


def whole(data: dict[str, Any], key: str, *, low: int = 0, high: int = 2**53 - 1) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Problem("bad_request", f"'{key}' must be a whole number from {low} to {high}.")
    return value
