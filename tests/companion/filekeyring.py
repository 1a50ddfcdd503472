"""A keyring backend that keeps secrets in a JSON file named by $WECLAW_TEST_KEYRING: for tests that run the
app as separate processes (a kill -9 and a restart must find the same phone-link key). Tests only; select
it in the child with PYTHON_KEYRING_BACKEND=filekeyring.FileKeyring and tests/companion on PYTHONPATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring.backend
import keyring.errors


class FileKeyring(keyring.backend.KeyringBackend):
    priority = 1  # type: ignore[assignment]

    @property
    def path(self) -> Path:
        return Path(os.environ["WECLAW_TEST_KEYRING"])

    def _load(self) -> dict[str, str]:
        try:
            return dict(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}\0{username}"] = password
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.path)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}\0{username}", None) is None:
            raise keyring.errors.PasswordDeleteError(username)
        self.path.write_text(json.dumps(data), encoding="utf-8")
