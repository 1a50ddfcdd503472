"""The Linux archive's extras: the menu entry, AppStream data, icons, and install.sh run for real (a fake
bundle installed into a temporary prefix, then uninstalled: no root, nothing outside the prefix)."""

from __future__ import annotations

import configparser
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "resources" / "linux"
sys.path.insert(0, str(ROOT / "scripts"))


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((LINUX / "weclaw-desktop.desktop").read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def test_desktop_entry_matches_the_app() -> None:
    """Its name is the window's desktop file name (app.setDesktopFileName), so docks find its icon."""
    entry = desktop_entry()
    assert entry["Type"] == "Application" and entry["Name"] == "WeClaw" and entry["Icon"] == "weclaw-desktop"
    assert entry["Exec"] == "@EXEC@" and entry["StartupWMClass"] == "weclaw-desktop"
    from weclaw_desktop.ui.boot import qt_application

    assert qt_application().desktopFileName() == "weclaw-desktop"
    assert "Comment[zh_CN]" in entry


def test_appstream_metadata() -> None:
    root = ET.parse(LINUX / "app.weclaw.WeClaw.metainfo.xml").getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == "app.weclaw.WeClaw"
    assert root.findtext("launchable") == "weclaw-desktop.desktop"
    assert root.find("releases/release").get("version") == "@VERSION@"  # type: ignore[union-attr]


def test_icons_are_the_app_icon_at_their_sizes() -> None:
    for size in (128, 256, 512):
        data = (LINUX / f"weclaw-desktop-{size}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", data[16:24]) == (size, size)
    svg = (LINUX / "weclaw-desktop.svg").read_text(encoding="utf-8")
    assert svg == (ROOT / "resources" / "icons" / "app.svg").read_text(encoding="utf-8").replace(
        "currentColor", "#2f6feb"
    )


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="needs appstreamcli")
def test_appstreamcli_accepts_the_metadata(tmp_path: Path) -> None:
    from build_bundle import linux_share_files

    files = linux_share_files("1.2.3")
    target = tmp_path / "app.weclaw.WeClaw.metainfo.xml"
    target.write_bytes(files["share/metainfo/app.weclaw.WeClaw.metainfo.xml"])
    proc = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--explain", str(target)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux archive")
def test_install_and_uninstall_into_a_prefix(tmp_path: Path) -> None:
    """install.sh from an unpacked archive (a stand-in bundle) into a prefix, then --uninstall."""
    from build_bundle import linux_share_files

    unpacked = tmp_path / "weclaw-1.2.3-linux-x86_64"
    (unpacked / "_internal" / "lib").mkdir(parents=True)
    (unpacked / "_internal" / "lib" / "real.so").write_text("x")
    os.symlink("lib/real.so", unpacked / "_internal" / "link.so")
    exe = unpacked / "weclaw"
    exe.write_text("#!/bin/sh\necho weclaw 1.2.3\n")
    exe.chmod(0o755)
    shutil.copy(LINUX / "install.sh", unpacked / "install.sh")
    for name, data in linux_share_files("1.2.3").items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)
    prefix = tmp_path / "prefix"
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        ["sh", str(unpacked / "install.sh"), "--prefix", str(prefix)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    app = prefix / "lib" / "weclaw"
    assert (app / "weclaw").is_file() and (app / "_internal" / "link.so").is_symlink()
    assert os.readlink(app / "_internal" / "link.so") == "lib/real.so"  # links kept as links
    assert os.readlink(prefix / "bin" / "weclaw") == str(app / "weclaw")
    desktop = (prefix / "share" / "applications" / "weclaw-desktop.desktop").read_text(encoding="utf-8")
    assert f'Exec="{app}/weclaw"' in desktop and f"TryExec={app}/weclaw" in desktop
    assert (prefix / "share" / "icons" / "hicolor" / "256x256" / "apps" / "weclaw-desktop.png").is_file()
    assert (prefix / "share" / "metainfo" / "app.weclaw.WeClaw.metainfo.xml").is_file()
    assert "is not on your PATH" in proc.stdout
    assert list(home.iterdir()) == []  # nothing outside the prefix
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(
            ["desktop-file-validate", str(prefix / "share" / "applications" / "weclaw-desktop.desktop")],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stdout
    # a second install replaces the first one cleanly
    assert (
        subprocess.run(
            ["sh", str(unpacked / "install.sh"), "--prefix", str(prefix)], env=env, capture_output=True
        ).returncode
        == 0
    )
    assert not (prefix / "lib" / "weclaw.old").exists() and not (prefix / "lib" / "weclaw.new").exists()
    gone = subprocess.run(
        ["sh", str(unpacked / "install.sh"), "--prefix", str(prefix), "--uninstall"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert gone.returncode == 0, gone.stderr
    assert not app.exists() and not (prefix / "bin" / "weclaw").exists()
    assert not (prefix / "share" / "applications" / "weclaw-desktop.desktop").exists()


def test_install_refuses_a_bundle_that_does_not_start(tmp_path: Path) -> None:
    unpacked = tmp_path / "x"
    (unpacked / "_internal").mkdir(parents=True)
    exe = unpacked / "weclaw"
    exe.write_text("#!/bin/sh\necho 'version GLIBC_2.35 not found' >&2\nexit 1\n")
    exe.chmod(0o755)
    shutil.copy(LINUX / "install.sh", unpacked / "install.sh")
    proc = subprocess.run(
        ["sh", str(unpacked / "install.sh"), "--prefix", str(tmp_path / "p")],
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "does not start on this system" in proc.stderr and "GLIBC_2.35" in proc.stderr
    assert not (tmp_path / "p" / "lib" / "weclaw").exists()
