"""Just enough of the ELF format (64-bit little-endian: x86_64, aarch64) for the bundle and its preflight.

- :func:`read_elf`: a shared library's ``DT_NEEDED`` names, ``RPATH``/``RUNPATH`` and the symbol versions it
  needs from each library (``GLIBC_2.35`` from libm.so.6, with the symbols: ``hypot``);
- :func:`glibc_floor`: the newest glibc a set of files needs, measured from those versions;
- :func:`clean_rpath`: drop the ``RPATH``/``RUNPATH`` entries that point outside the bundle (the build
  machine's Python), keeping ``$ORIGIN`` ones.

Read through ``mmap``: the preflight looks at Qt's libraries (tens of MB) without reading them whole.
Standard library only; anything that is not such an ELF file gives None.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SHT_DYNAMIC = 6
SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
DT_NULL, DT_NEEDED, DT_RPATH, DT_RUNPATH = 0, 1, 15, 29
_VERSION = re.compile(r"^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass
class ElfInfo:
    needed: list[str] = field(default_factory=list)
    rpath: str | None = None
    runpath: str | None = None
    #: library file name -> version name -> undefined symbols bound to that version
    versions: dict[str, dict[str, list[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Section:
    kind: int
    offset: int
    size: int
    link: int
    info: int


def _sections(data: mmap.mmap | bytes) -> list[_Section] | None:
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3A:0x3C], "little")
    shnum = int.from_bytes(data[0x3C:0x3E], "little")
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        header = data[base : base + 64]
        if len(header) < 64:
            return None
        kind, _flags, _addr, offset, size, link, info = struct.unpack_from("<IQQQQII", header, 4)
        out.append(_Section(kind, offset, size, link, info))
    return out


def _cstr(data: mmap.mmap | bytes, start: int) -> str:
    end = data.find(b"\0", start)
    return bytes(data[start : end if end >= 0 else len(data)]).decode("utf-8", "replace")


def _parse(data: mmap.mmap | bytes, *, symbols: bool) -> ElfInfo | None:
    sections = _sections(data)
    if sections is None:
        return None
    info = ElfInfo()
    for sec in sections:
        if sec.kind == SHT_DYNAMIC and sec.link < len(sections):
            strtab = sections[sec.link].offset
            for entry in range(sec.offset, sec.offset + sec.size, 16):
                tag, value = struct.unpack_from("<qQ", data, entry)
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED:
                    info.needed.append(_cstr(data, strtab + value))
                elif tag == DT_RPATH:
                    info.rpath = _cstr(data, strtab + value)
                elif tag == DT_RUNPATH:
                    info.runpath = _cstr(data, strtab + value)
    by_index: dict[int, tuple[str, str]] = {}
    for sec in sections:
        if sec.kind != SHT_GNU_VERNEED or sec.link >= len(sections):
            continue
        strtab = sections[sec.link].offset
        pos = sec.offset
        for _ in range(sec.info):
            _ver, count, file_off, aux, nxt = struct.unpack_from("<HHIII", data, pos)
            library = _cstr(data, strtab + file_off)
            names = info.versions.setdefault(library, {})
            apos = pos + aux
            for _ in range(count):
                _hash, _flags, other, name_off, anext = struct.unpack_from("<IHHII", data, apos)
                version = _cstr(data, strtab + name_off)
                names.setdefault(version, [])
                by_index[other] = (library, version)
                if not anext:
                    break
                apos += anext
            if not nxt:
                break
            pos += nxt
    if symbols and by_index:
        dynsym = next((s for s in sections if s.kind == SHT_DYNSYM), None)
        versym = next((s for s in sections if s.kind == SHT_GNU_VERSYM), None)
        if dynsym is not None and versym is not None and dynsym.link < len(sections):
            strtab = sections[dynsym.link].offset
            for i in range(dynsym.size // 24):
                name_off, _info, _other, shndx = struct.unpack_from("<IBBH", data, dynsym.offset + i * 24)
                if shndx != 0:  # defined here, not needed from elsewhere
                    continue
                index = struct.unpack_from("<H", data, versym.offset + i * 2)[0] & 0x7FFF
                if index in by_index:
                    library, version = by_index[index]
                    info.versions[library][version].append(_cstr(data, strtab + name_off))
    return info


def read_elf(path: str | Path, *, symbols: bool = False) -> ElfInfo | None:
    """The dynamic-linking facts of ``path``, or None if it is not a 64-bit little-endian ELF file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
            if head[:4] != b"\x7fELF":
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _parse(data, symbols=symbols)
    except (OSError, ValueError, struct.error):
        return None


def elf_needed(path: str | Path) -> list[str] | None:
    """The DT_NEEDED names of a 64-bit little-endian ELF file, or None if it is not one (or unreadable)."""
    info = read_elf(path)
    return None if info is None else info.needed


def glibc_version(name: str) -> tuple[int, ...] | None:
    """``GLIBC_2.35`` -> (2, 35); None for other version names (``GLIBC_PRIVATE``, ``GLIBCXX_3.4``)."""
    match = _VERSION.match(name)
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


@dataclass
class Floor:
    """The newest glibc version a set of files needs, and who needs it for which symbols."""

    version: tuple[int, ...] = (2, 0)
    #: file -> symbols needing exactly ``version`` (``name@GLIBC_x.y``)
    culprits: dict[str, list[str]] = field(default_factory=dict)
    #: other version families needed from outside (``GLIBCXX`` -> newest ``GLIBCXX_3.4.29``)
    others: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return ".".join(map(str, self.version))


def _family(version: str) -> tuple[str, tuple[int, ...]] | None:
    match = re.match(r"^([A-Z]+)_(\d+(?:\.\d+)*)$", version)
    if not match:
        return None
    return match.group(1), tuple(int(p) for p in match.group(2).split("."))


def glibc_floor(files: Iterable[Path], *, provided: Iterable[str] = ()) -> Floor:
    """The glibc floor of ``files`` (ELF files; others are skipped), from the symbol versions they need.

    ``provided``: library names found inside the set itself; versions needed from those do not count among
    ``others`` (a bundled libssl's OPENSSL_3.0.0 needs from its bundled libcrypto).
    """
    inside = set(provided)
    floor = Floor()
    newest: dict[str, tuple[int, ...]] = {}
    for path in files:
        info = read_elf(path, symbols=True)
        if info is None:
            continue
        for library, versions in info.versions.items():
            for version, names in versions.items():
                number = glibc_version(version)
                if number is not None:
                    if number > floor.version:
                        floor.version, floor.culprits = number, {}
                    if number == floor.version:
                        floor.culprits.setdefault(str(path), []).extend(f"{n}@{version}" for n in names or ["?"])
                    continue
                family = _family(version)
                if family is None or library in inside:
                    continue
                name, parts = family
                if parts > newest.get(name, ()):
                    newest[name] = parts
                    floor.others[name] = f"{name}_{'.'.join(map(str, parts))} ({library})"
    return floor


def clean_rpath(path: str | Path) -> str | None:
    """Remove RPATH/RUNPATH entries that are not ``$ORIGIN``-relative. Returns what was removed, or None.

    An entry left empty is deleted from the dynamic section (the following entries move up one slot, as
    ``patchelf --remove-rpath`` does); a mixed one is rewritten in place, shorter, in the same string.
    """
    try:
        with open(path, "r+b") as fh:
            if fh.read(4) != b"\x7fELF":
                return None
            with mmap.mmap(fh.fileno(), 0) as data:
                return _clean_rpath(data)
    except (OSError, ValueError, struct.error):
        return None


def _keep_entry(entry: str) -> bool:
    return entry.startswith(("$ORIGIN", "${ORIGIN}"))


def _clean_rpath(data: mmap.mmap) -> str | None:
    sections = _sections(data)
    if sections is None:
        return None
    removed: list[str] = []
    for sec in sections:
        if sec.kind != SHT_DYNAMIC or sec.link >= len(sections):
            continue
        strtab = sections[sec.link].offset
        count = sec.size // 16
        entries = [struct.unpack_from("<qQ", data, sec.offset + i * 16) for i in range(count)]
        kept: list[tuple[int, int]] = []
        for tag, value in entries:
            if tag in (DT_RPATH, DT_RUNPATH):
                old = _cstr(data, strtab + value)
                parts = [p for p in old.split(":") if p]
                good = [p for p in parts if _keep_entry(p)]
                if len(good) != len(parts):
                    removed.extend(p for p in parts if not _keep_entry(p))
                    if not good:
                        continue  # drop the entry
                    new = ":".join(good).encode()
                    data[strtab + value : strtab + value + len(old.encode())] = new.ljust(len(old.encode()), b"\0")
            kept.append((tag, value))
        if len(kept) != len(entries):
            kept += [(DT_NULL, 0)] * (len(entries) - len(kept))
            for i, (tag, value) in enumerate(kept):
                struct.pack_into("<qQ", data, sec.offset + i * 16, tag, value)
    if removed:
        data.flush()
    return ":".join(removed) if removed else None
