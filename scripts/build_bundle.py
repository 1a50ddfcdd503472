#!/usr/bin/env python3
"""Build the PyInstaller bundle (onedir), package it, and test it the way a user gets it.

    python scripts/build_bundle.py [--skip-build] [--max-mb 170] [--xz-preset 6] [--startup-runs 5]

Steps: ``pyinstaller build.spec``; checks of the folder (no dangling symlinks, no RPATH naming the build
machine, the glibc floor measured from the ELF symbol versions, at most ``bundling.GLIBC_FLOOR``); on Linux
the installable ``weclaw-<version>-linux-<arch>.tar.xz`` (the bundle, ``install.sh``, the menu entry, icons
and AppStream data); the bundle's ``--self-test`` run from an unpacked, read-only copy of that archive with
a fresh ``WECLAW_HOME`` and the user's own ``LD_LIBRARY_PATH``/``QT_PLUGIN_PATH`` (which children must get
back); the keyring backends compared with the source's; start-up time to the window, bundle and source side
by side. Prints size (unpacked and compressed), glibc floor and start-up; exits non-zero on any failure
or when the unpacked bundle is over ``--max-mb``. Works on Windows, macOS and Linux (the archive, floor and
RPATH steps are Linux's); CI runs it on Linux.
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import shutil
import stat
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weclaw_desktop import __version__  # noqa: E402
from weclaw_desktop.bundling import GLIBC_FLOOR  # noqa: E402
from weclaw_desktop.elf import glibc_floor, read_elf  # noqa: E402

KEYRING_PROBE = "from weclaw_desktop.selfcheck.keyring_check import backend_summary; print(backend_summary())"
LINUX = sys.platform.startswith("linux")
#: The user's own values of variables PyInstaller changes: the bundle's children must see these again.
CANARY_ENV = {"LD_LIBRARY_PATH": "/nonexistent/weclaw-canary/lib", "QT_PLUGIN_PATH": "/nonexistent/weclaw-canary/qt"}


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def check_line(stdout: str, name: str) -> str | None:
    """The detail of the self-test line for check ``name`` (``ok  name  12 ms  detail``)."""
    for line in stdout.splitlines():
        parts = line.split(None, 4)
        if len(parts) == 5 and parts[0] in ("ok", "FAIL") and parts[1] == name and parts[3] == "ms":
            return parts[4]
    return None


def files_in(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def dangling_links(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_symlink() and not p.exists())


def foreign_rpaths(path: Path) -> list[str]:
    """ELF files whose RPATH/RUNPATH names a folder outside the bundle (the build machine's)."""
    bad = []
    for p in path.rglob("*"):
        if not p.is_file() or p.is_symlink():
            continue
        info = read_elf(p)
        if info is None:
            continue
        for entries in (info.rpath, info.runpath):
            if entries and any(e and not e.startswith(("$ORIGIN", "${ORIGIN}")) for e in entries.split(":")):
                bad.append(f"{p.relative_to(path)}: {entries}")
    return sorted(bad)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def linux_share_files(version: str) -> dict[str, bytes]:
    """Files for ``share/`` in the archive (name -> bytes): menu entry, AppStream data, icons, the floor."""
    linux = ROOT / "resources" / "linux"
    metainfo = (linux / "app.weclaw.WeClaw.metainfo.xml").read_text(encoding="utf-8")
    metainfo = metainfo.replace("@VERSION@", version).replace("@DATE@", datetime.date.today().isoformat())
    out = {
        "share/applications/weclaw-desktop.desktop": (linux / "weclaw-desktop.desktop").read_bytes(),
        "share/metainfo/app.weclaw.WeClaw.metainfo.xml": metainfo.encode("utf-8"),
        "share/icons/hicolor/scalable/apps/weclaw-desktop.svg": (linux / "weclaw-desktop.svg").read_bytes(),
        "share/weclaw/glibc-floor": f"{GLIBC_FLOOR}\n".encode(),
    }
    for size in (128, 256, 512):
        out[f"share/icons/hicolor/{size}x{size}/apps/weclaw-desktop.png"] = (
            linux / f"weclaw-desktop-{size}.png"
        ).read_bytes()
    return out


def make_archive(bundle: Path, target: Path, top: str, preset: int) -> float:
    """``target`` (.tar.xz): ``top/`` holding the bundle, install.sh and share/. Returns seconds taken."""
    t0 = time.perf_counter()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(bundle, arcname=top, recursive=True)  # symlinks stay symlinks (relative, inside the bundle)
        install = ROOT / "resources" / "linux" / "install.sh"
        info = tar.gettarinfo(str(install), arcname=f"{top}/install.sh")
        info.mode = 0o755
        with install.open("rb") as fh:
            tar.addfile(info, fh)
        for name, data in linux_share_files(__version__).items():
            member = tarfile.TarInfo(f"{top}/{name}")
            member.size, member.mode, member.mtime = len(data), 0o644, int(time.time())
            tar.addfile(member, io.BytesIO(data))
    xz = shutil.which("xz")
    if xz:  # multi-threaded
        with target.open("wb") as out:
            subprocess.run([xz, f"-{preset}", "-T0", "-c"], input=raw.getvalue(), stdout=out, check=True)
    else:
        import lzma

        target.write_bytes(lzma.compress(raw.getvalue(), preset=preset))
    return time.perf_counter() - t0


def unpack_read_only(archive: Path, where: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(where, filter="tar")
    top = next(p for p in where.iterdir() if p.is_dir())
    for p in [top, *top.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return top


def make_writable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def base_env(home: str) -> dict[str, str]:
    env = {**os.environ, "WECLAW_HOME": home, "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    for name in ("WECLAW_API_KEY", "OPENAI_API_KEY", "PYTHONPATH", "WECLAW_TOOLS", "LD_LIBRARY_PATH", "QT_PLUGIN_PATH"):
        env.pop(name, None)
    return env


def startup_times(exe: Path, runs: int) -> tuple[list[float], list[float]]:
    """Seconds from launch to the main window shown (offscreen, empty data folder): bundle, source; interleaved."""
    bundle: list[float] = []
    source: list[float] = []
    for _ in range(runs):
        for argv, sink, cwd in (([str(exe)], bundle, None), ([sys.executable, "-m", "weclaw_desktop"], source, ROOT)):
            with tempfile.TemporaryDirectory(prefix="weclaw-start-") as home:
                env = {**base_env(home), "WECLAW_EXIT_AFTER_SHOW": "1"}
                if cwd is not None:
                    env["PYTHONPATH"] = str(ROOT)
                t0 = time.time()
                proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
                shown = [line for line in proc.stdout.splitlines() if line.startswith("shown ")]
                if proc.returncode != 0 or not shown:
                    raise RuntimeError(f"{argv[0]} did not show its window: {proc.stderr[-1500:]}")
                sink.append(float(shown[0].split()[1]) - t0)
    return bundle, source


def build(dist: Path) -> float:
    t0 = time.perf_counter()
    cmd = [
        sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
        "--distpath", str(dist), "--workpath", str(ROOT / "build"), str(ROOT / "build.spec"),
    ]  # fmt: skip
    print("building:", " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        raise RuntimeError("build failed")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-build", action="store_true", help="test an existing dist/weclaw")
    ap.add_argument("--max-mb", type=float, default=170.0, help="fail when the unpacked bundle is larger")
    ap.add_argument("--dist", default=str(ROOT / "dist"))
    ap.add_argument("--xz-preset", type=int, default=6, help="xz level of the archive (CI uses a fast one)")
    ap.add_argument("--startup-runs", type=int, default=5, help="start-up measurements of each (0: skip)")
    args = ap.parse_args()
    dist = Path(args.dist)
    failures: list[str] = []
    build_s = 0.0 if args.skip_build else build(dist)
    bundle = dist / "weclaw"
    exe = bundle / ("weclaw.exe" if os.name == "nt" else "weclaw")
    if not exe.exists():
        print(f"no executable at {exe}", file=sys.stderr)
        return 1
    size_mb = folder_size(bundle) / 1e6
    summary = [f"bundle: {bundle}", f"unpacked size: {size_mb:.1f} MB (limit {args.max_mb:.0f} MB)"]
    if build_s:
        summary.append(f"build time: {build_s:.1f} s")

    dangling = dangling_links(bundle)
    if dangling:
        failures.append(f"dangling symlinks: {dangling}")
    run_dir, archive, unpacked_root = bundle, None, None
    if LINUX:
        foreign = foreign_rpaths(bundle)
        if foreign:
            failures.append(f"{len(foreign)} files with a build-machine RPATH, e.g. {foreign[:3]}")
        files = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()]
        floor = glibc_floor(files, provided={p.name for p in files})
        culprits = "; ".join(
            f"{Path(f).name}: {', '.join(sorted(set(s))[:4])}" for f, s in sorted(floor.culprits.items())
        )
        summary.append(f"glibc floor: {floor.text} (declared {GLIBC_FLOOR}; needed by {culprits})")
        if floor.others:
            summary.append(f"also needed from the system: {', '.join(floor.others.values())}")
        if version_tuple(floor.text) > version_tuple(GLIBC_FLOOR):
            failures.append(f"the bundle needs glibc {floor.text}, over the declared floor {GLIBC_FLOOR}")
        arch = platform.machine().lower()
        top = f"weclaw-{__version__}-linux-{arch}"
        archive = dist / f"{top}.tar.xz"
        took = make_archive(bundle, archive, top, args.xz_preset)
        summary.append(
            f"archive: {archive.name} {archive.stat().st_size / 1e6:.1f} MB (xz -{args.xz_preset}, {took:.1f} s)"
        )
        unpacked_root = Path(tempfile.mkdtemp(prefix="weclaw-unpacked-"))
        run_dir = unpack_read_only(archive, unpacked_root)
        exe = run_dir / exe.name

    with tempfile.TemporaryDirectory(prefix="weclaw-home-") as home:
        env = {**base_env(home), **CANARY_ENV}
        before = files_in(run_dir)
        t0 = time.perf_counter()
        proc = subprocess.run([str(exe), "--self-test"], env=env, capture_output=True, text=True, timeout=600)
        test_s = time.perf_counter() - t0
        written = sorted(files_in(run_dir) - before)
        source = subprocess.run(
            [sys.executable, "-c", KEYRING_PROBE],
            cwd=ROOT,
            env=base_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
    print(proc.stdout, end="")
    if proc.stderr.strip():
        print(proc.stderr[-4000:], file=sys.stderr, end="")
    where = "an unpacked read-only copy of the archive" if archive else "the build folder"
    summary.append(f"self-test: exit {proc.returncode} in {test_s:.2f} s, from {where}, fresh WECLAW_HOME")
    if proc.returncode != 0:
        failures.append("the bundle's self-test failed")
    child = check_line(proc.stdout, "child-env") or ""
    if LINUX and not all(f"{name}={value}" in child for name, value in CANARY_ENV.items()):
        failures.append(f"the child did not get the user's {', '.join(CANARY_ENV)} back: {child}")
    bundle_backends = check_line(proc.stdout, "keyring-backends")
    source_backends = source.stdout.strip()
    if source.returncode != 0 or not source_backends:
        failures.append(f"could not list the keyring backends from source: {source.stderr[-1000:]}")
    elif bundle_backends != source_backends:
        failures.append(
            f"keyring backends differ (a trimmed-away dependency?): source {source_backends}; bundle {bundle_backends}"
        )
    else:
        summary.append("keyring backends: same in the bundle as from source")
    if written:
        failures.append(f"the self-test wrote into the bundle's folder: {written[:10]}")
    if args.startup_runs > 0 and proc.returncode == 0:
        try:
            b, s = startup_times(exe, args.startup_runs)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            failures.append(f"start-up measurement failed: {exc}")
        else:
            summary.append(
                f"start-up to the window (offscreen, median of {len(b)}, interleaved): bundle {statistics.median(b):.2f} s, "
                f"source {statistics.median(s):.2f} s (bundle min {min(b):.2f} / max {max(b):.2f})"
            )
    if unpacked_root is not None:
        make_writable(unpacked_root)
        shutil.rmtree(unpacked_root, ignore_errors=True)
    if size_mb > args.max_mb:
        failures.append(f"the bundle is {size_mb:.1f} MB unpacked, over {args.max_mb:.0f} MB")
    print("\n".join(summary))
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
