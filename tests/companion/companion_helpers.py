"""Helpers for the phone-link tests: a phone-like HTTP client and a rig around a real CompanionService."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from polling import until

from weclaw_desktop.companion import CompanionEvent, CompanionService


@dataclass
class Phone:
    """A paired phone, talking to the API as the page does."""

    http: aiohttp.ClientSession
    base: str
    token: str
    device_id: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def get(self, path: str, **kw: Any) -> aiohttp.ClientResponse:
        headers = {**self.auth, **kw.pop("headers", {})}
        return await self.http.get(self.base + path, headers=headers, **kw)

    async def post(self, path: str, **kw: Any) -> aiohttp.ClientResponse:
        headers = {**self.auth, **kw.pop("headers", {})}
        return await self.http.post(self.base + path, headers=headers, **kw)


@dataclass
class Rig:
    service: CompanionService
    http: aiohttp.ClientSession
    incoming: Path
    events: list[CompanionEvent] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.service.base_url

    async def pair(self, name: str = "Test phone") -> Phone:
        code = self.service.new_pairing_code()
        async with self.http.post(self.base + "/api/v1/pair", json={"token": code.token, "name": name}) as r:
            assert r.status == 200, await r.text()
            body = await r.json()
        return Phone(self.http, self.base, body["token"], body["device"]["id"])

    def kinds(self) -> list[str]:
        return [e.kind.value for e in self.events]


def make_file(folder: Path, name: str, size: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(os.urandom(size))
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def wait_for(predicate: Any, within: float = 5.0) -> None:
    await until(predicate, within=within, interval=0.02, message="condition not met in time")
