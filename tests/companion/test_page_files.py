"""The phone page's files as shipped: the vendored crypto libraries are exactly the pinned npm releases (with
their licence), nothing is loaded from elsewhere, and every code the desktop can send has a text in both of
the page's languages."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from weclaw_desktop.companion.problems import CODES
from weclaw_desktop.companion.server import PAGE, vendor_files
from weclaw_desktop.paths import resource_path

PAGE_DIR = resource_path("companion")
#: npm's integrity (SHA-512 of the tarball) of the releases scripts/vendor_noble.py took the files from
PINNED = {
    "@noble/ciphers": (
        "2.4.0",
        "sha512-AnjFn0Jv92laAkvMrghlFZq4qQCIN/4DxFV/eooqtC2YTjB7kBeLMS2T9KJX4Dn+ZVXLOwK0lSgqDtx9gvxtiw==",
    ),
    "@noble/hashes": (
        "2.4.0",
        "sha512-X5XaVWZIBCT7HHZGm5I7ZQXDwLG+bGXuSrMQAW+7Zvl87h1kmc1ZB1VSRJcpUfoUrGQp4Fkoxm5kZ+Ms+aW+eA==",
    ),
}


def manifest() -> dict[str, object]:
    return dict(json.loads((PAGE_DIR / "vendor" / "VENDORED.json").read_text(encoding="utf-8")))


def test_vendored_files_match_the_pinned_releases() -> None:
    """Each vendored file has the SHA-256 the manifest recorded when it was taken from the pinned tarball."""
    packages = manifest()["packages"]
    assert isinstance(packages, list)
    assert {p["name"]: (p["version"], p["integrity"]) for p in packages} == PINNED
    for p in packages:
        folder = PAGE_DIR / "vendor" / p["dir"]
        assert "LICENSE" in p["files"] and "MIT License" in (folder / "LICENSE").read_text(encoding="utf-8")
        for name, digest in p["files"].items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
        assert sorted(x.name for x in folder.iterdir()) == sorted(p["files"])  # nothing else lies there


def test_the_page_loads_code_only_from_itself() -> None:
    """Every import resolves to a file the server serves; no URL, CDN or eval anywhere."""
    served = {path for path in PAGE} | set(vendor_files(PAGE_DIR))
    sources = [PAGE_DIR / n for n, _ in PAGE.values() if n.endswith((".js", ".html"))]
    sources += [p for p, _ in vendor_files(PAGE_DIR).values() if p.suffix == ".js"]
    for src in sources:
        text = src.read_text(encoding="utf-8")
        code = re.sub(r"/\*.*?\*/|(?<![:\"'])//[^\n]*", "", text, flags=re.S)  # comments may cite papers
        assert not re.search(r"https?://", code), src
        assert not re.search(r"\beval\(|new Function\(", text), src
        for spec in re.findall(r'from "([^"]+)"', text):
            target = (src.parent / spec).resolve().relative_to(PAGE_DIR.resolve())
            assert "/" + target.as_posix() in served, (src.name, spec)
    html = (PAGE_DIR / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<script[^>]*src="([^"]+)"', html) == ["/app.js"]


def test_every_desktop_code_has_a_text_in_both_languages() -> None:
    text = (PAGE_DIR / "i18n.js").read_text(encoding="utf-8")
    en, zh = text.split("\n  zh: {", 1)
    for code in CODES:
        assert f'"err.{code}"' in en, code
        assert f'"err.{code}"' in zh, code
    keys = re.compile(r'^\s*"?([\w.]+)"?\s*:', re.M)
    assert set(keys.findall(en.split("en: {", 1)[1])) == set(keys.findall(zh))  # the same keys in both


def test_no_secret_is_ever_put_into_the_address_bar_or_storage_keys() -> None:
    app = (PAGE_DIR / "app.js").read_text(encoding="utf-8")
    assert 'history.replaceState(null, "", location.pathname)' in app  # the fragment leaves at once
    assert 'localStorage.setItem("weclaw.key' not in app and "cookie" not in app.lower()
    assert Path(PAGE_DIR / "proto.js").read_text(encoding="utf-8").count('credentials: "omit"') >= 4
