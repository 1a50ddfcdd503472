"""Helpers for the phone-link tests: the Python phone (:mod:`weclaw_desktop.companion.client`) and a rig
around a real CompanionService on 127.0.0.1."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from polling import until

from weclaw_desktop.companion import CompanionEvent, CompanionService
from weclaw_desktop.companion.client import Phone, Refused, pair_phone

__all__ = ["MemorySecrets", "Phone", "Refused", "Rig", "make_file", "pair_phone", "sha", "wait_for"]


@dataclass
class Rig:
    service: CompanionService
    http: aiohttp.ClientSession
    incoming: Path
    events: list[CompanionEvent] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.service.base_url

    async def pair(self, name: str = "Test phone", phone_id: str | None = None) -> Phone:
        return await pair_phone(self.http, self.service.new_pairing_code().url, name, phone_id)

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


class MemorySecrets:
    """The keyring as the service sees it (persistent), in memory."""

    persistent = True

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> bool:
        self.values[name] = value
        return True
