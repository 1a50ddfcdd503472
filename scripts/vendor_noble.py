"""Vendor the phone page's crypto libraries from the npm registry: ``@noble/ciphers`` and ``@noble/hashes``.

    python scripts/vendor_noble.py            # re-creates resources/companion/vendor/ from `npm pack`

The page runs on plain HTTP (no WebCrypto), so it carries audited pure-JS implementations; it never loads
code from a CDN. Each tarball is checked against the pinned npm integrity (SHA-512) below before anything is
copied; only the files the page imports (and their LICENSE) are kept. The manifest VENDORED.json records
every file's SHA-256; tests/companion/test_vendor.py fails if a served file differs from it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "resources" / "companion" / "vendor"
PACKAGES = [
    {
        "name": "@noble/ciphers",
        "version": "2.4.0",
        "dir": "noble-ciphers",
        "integrity": "sha512-AnjFn0Jv92laAkvMrghlFZq4qQCIN/4DxFV/eooqtC2YTjB7kBeLMS2T9KJX4Dn+ZVXLOwK0lSgqDtx9gvxtiw==",
        "files": ["chacha.js", "_arx.js", "_poly1305.js", "utils.js", "LICENSE"],
    },
    {
        "name": "@noble/hashes",
        "version": "2.4.0",
        "dir": "noble-hashes",
        "integrity": "sha512-X5XaVWZIBCT7HHZGm5I7ZQXDwLG+bGXuSrMQAW+7Zvl87h1kmc1ZB1VSRJcpUfoUrGQp4Fkoxm5kZ+Ms+aW+eA==",
        "files": ["hkdf.js", "hmac.js", "sha2.js", "_md.js", "_u64.js", "utils.js", "LICENSE"],
    },
]


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def main() -> int:
    manifest = {"about": "Vendored with scripts/vendor_noble.py from the npm registry; do not edit.", "packages": []}
    with tempfile.TemporaryDirectory(prefix="weclaw-vendor-") as tmp:
        for pkg in PACKAGES:
            spec = f"{pkg['name']}@{pkg['version']}"
            out = subprocess.run(["npm", "pack", spec, "--silent"], cwd=tmp, capture_output=True, text=True, check=True)
            tarball = Path(tmp) / out.stdout.strip().splitlines()[-1]
            data = tarball.read_bytes()
            if integrity(data) != pkg["integrity"]:
                print(f"{spec}: integrity {integrity(data)} is not the pinned {pkg['integrity']}", file=sys.stderr)
                return 1
            target = VENDOR / str(pkg["dir"])
            target.mkdir(parents=True, exist_ok=True)
            hashes: dict[str, str] = {}
            with tarfile.open(tarball) as tar:
                for name in pkg["files"]:
                    member = tar.extractfile(f"package/{name}")
                    assert member is not None, name
                    content = member.read()
                    (target / name).write_bytes(content)
                    hashes[name] = hashlib.sha256(content).hexdigest()
            manifest["packages"].append(  # type: ignore[attr-defined]
                {k: pkg[k] for k in ("name", "version", "dir", "integrity")} | {"files": hashes}
            )
            print(f"{spec}: {len(hashes)} files, integrity checked")
    (VENDOR / "VENDORED.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
