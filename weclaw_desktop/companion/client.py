"""A phone in Python that speaks the phone link's protocol v1 exactly as the page does (resources/companion/
proto.js): prove the QR secret, open sessions, sign every request, seal and open bodies and records.

For the tests (``tests/companion``), the benchmarks (``bench/companion.py``) and the screenshot scripts;
the app itself never uses it. The page is the other, independent implementation (noble in the browser).
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion import wire
from weclaw_desktop.companion.sessions import session_keys


class Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body

    @property
    def code(self) -> str:
        return str(self.body.get("code", ""))


@dataclass
class Phone:
    """A paired phone, talking to the API as the page does (signed requests, sealed bodies)."""

    http: aiohttp.ClientSession
    base: str
    device_id: str
    gen: int
    key: bytes
    phone_id: str
    session: str = ""
    mac_key: bytes = b""
    c2s: bytes = b""
    s2c: bytes = b""
    seqs: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Origin": self.base}

    async def open_session(self) -> dict[str, Any]:
        async with self.http.post(self.base + "/api/v1/hello", json={}, headers=self.headers) as r:
            hello = await r.json()
            if r.status != 200:
                raise Refused(r.status, hello)
        nonce = os.urandom(16)
        challenge = hello["challenge"]
        parts = ("weclaw/v1/session", self.device_id, str(self.gen), challenge, c.b64e(nonce))
        body = {
            "device": self.device_id,
            "gen": self.gen,
            "challenge": challenge,
            "nonce": c.b64e(nonce),
            "mac": c.b64e(c.mac(self.key, *parts)),
        }
        async with self.http.post(self.base + "/api/v1/session", json=body, headers=self.headers) as r:
            data = await r.json()
            if r.status != 200:
                raise Refused(r.status, data)
        proof = c.b64d(data["proof"])
        if not c.mac_ok(self.key, proof, "weclaw/v1/session-ok", data["session"], challenge, c.b64e(nonce)):
            raise Refused(0, {"code": "auth", "error": "the desktop did not prove its key"})
        self.session = data["session"]
        self.mac_key, self.c2s, self.s2c = session_keys(self.key, self.session, c.b64d(challenge), nonce)
        self.seqs = {}
        self.info = json.loads(c.open_sealed(self.s2c, data["info"], f"weclaw/v1/session-info|{self.session}"))
        renew = self.info.get("renew")
        if renew:
            self.gen, self.key = renew["gen"], c.b64d(renew["key"])
        return self.info

    def sign(self, method: str, path: str, lane: str, body_digest: str) -> tuple[dict[str, str], int]:
        seq = self.seqs.get(lane, 0) + 1
        self.seqs[lane] = seq
        tag = c.mac(self.mac_key, *wire.request_parts(method, path, lane, seq, body_digest))
        return {**self.headers, wire.AUTH_HEADER: f"{self.session}.{lane}.{seq}.{c.b64e(tag)}"}, seq

    def unseal(self, lane: str, seq: int, status: int, data: dict[str, Any]) -> dict[str, Any]:
        if "c" not in data:
            return data  # not sealed: a refusal before the session was known
        return dict(json.loads(c.open_sealed(self.s2c, data, wire.response_ad(lane, seq, status))))

    async def call(self, path: str, body: dict[str, Any] | None = None, lane: str = "ctl") -> dict[str, Any]:
        """A signed control call; raises Refused on a non-200 answer."""
        if not self.session:
            await self.open_session()
        seq = self.seqs.get(lane, 0) + 1
        raw = json.dumps(c.seal(self.c2s, wire.dumps(body or {}), wire.request_ad("POST", path, lane, seq))).encode()
        headers, seq = self.sign("POST", path, lane, c.digest(raw))
        headers["Content-Type"] = "application/json"
        async with self.http.post(self.base + path, data=raw, headers=headers) as r:
            data = self.unseal(lane, seq, r.status, await r.json())
            if r.status != 200:
                raise Refused(r.status, data)
            return data

    async def download(self, offer: str, f: dict[str, Any], first: int = 0) -> bytes:
        """Records ``first``.. of an offered file, opened and checked; the plaintext."""
        if not self.session:
            await self.open_session()
        lane = f"dl:{f['id']}"
        path = f"/api/v1/download?o={offer}&f={f['id']}&from={first}"
        headers, seq = self.sign("GET", path, lane, c.digest(b""))
        async with self.http.get(self.base + path, headers=headers) as r:
            raw = await r.read()
            if r.status != 200:
                raise Refused(r.status, self.unseal(lane, seq, r.status, json.loads(raw)))
        sealer = c.RecordSealer(c.b64d(f["key"]), f["id"], f["size"], raw[: c.SALT])
        return b"".join(sealer.open(i, rec) for i, rec in c.split_records(raw[c.SALT :], f["size"], first))

    async def upload(
        self, upload: str, fid: str, key: bytes, data: bytes, first: int = 0, n: int = 16
    ) -> dict[str, Any]:
        lane = f"up:{fid}"
        size = len(data)
        sealer = c.RecordSealer(key, fid, size)
        end = min(c.record_count(size), first + n)
        body = sealer.salt + b"".join(
            sealer.seal(i, data[i * c.RECORD : i * c.RECORD + c.record_len(size, i)]) for i in range(first, end)
        )
        path = f"/api/v1/upload?u={upload}&f={fid}&from={first}"
        headers, seq = self.sign("POST", path, lane, "salt:" + c.b64e(sealer.salt))
        headers["Content-Type"] = "application/octet-stream"
        async with self.http.post(self.base + path, data=body, headers=headers) as r:
            got = self.unseal(lane, seq, r.status, await r.json())
            if r.status != 200:
                raise Refused(r.status, got)
            return got

    async def send(self, name: str, data: bytes) -> dict[str, Any]:
        """Upload one whole file the way the page does: prepare, then records in requests of 16."""
        prepared = await self.call("/api/v1/upload/prepare", {"files": [{"id": "f1", "name": name, "size": len(data)}]})
        key = c.b64d(prepared["files"]["f1"])
        first, result = 0, {}
        while True:
            result = await self.upload(prepared["upload"], "f1", key, data, first)
            if result.get("done"):
                return result
            first = result["received"]

    async def offers(self) -> list[dict[str, Any]]:
        return list((await self.call("/api/v1/state"))["offers"])

    async def open_events(self) -> aiohttp.ClientResponse:
        """The event stream (the page is open: the desktop shows the phone online). Close it when done."""
        if not self.session:
            await self.open_session()
        headers, _ = self.sign("GET", "/api/v1/events", "ev", c.digest(b""))
        return await self.http.get(self.base + "/api/v1/events", headers=headers)


async def pair_phone(
    http: aiohttp.ClientSession, url: str, name: str = "Test phone", phone_id: str | None = None
) -> Phone:
    """What the page does with the QR code's URL: prove the secret, receive the device key."""
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    secret = c.b64d(parts.fragment.removeprefix("s="))
    pid, key = c.pairing_id(secret), c.pairing_key(secret)
    phone_id = phone_id or secrets.token_urlsafe(16)
    nonce = c.b64e(os.urandom(16))
    hello = wire.dumps({"name": name, "phone": phone_id, "nonce": nonce})
    body = {"pid": pid, "req": c.seal(key, hello, f"weclaw/v1/pair-req|{pid}")}
    async with http.post(base + "/api/v1/pair", json=body, headers={"Origin": base}) as r:
        data = await r.json()
        if r.status != 200:
            raise Refused(r.status, data)
    granted = json.loads(c.open_sealed(key, data["res"], f"weclaw/v1/pair-res|{pid}|{nonce}"))
    return Phone(http, base, granted["device"], granted["gen"], c.b64d(granted["key"]), phone_id)
