"""The ELF reader behind the glibc floor, RPATH cleaning and the preflight, on real shared libraries built
here with the system's C compiler (and on the interpreter's own extension modules)."""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from weclaw_desktop.elf import clean_rpath, glibc_floor, glibc_version, read_elf

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF")
CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="needs a C compiler")


def compile_so(folder: Path, name: str, source: str, *flags: str) -> Path:
    src = folder / f"{name}.c"
    src.write_text(source, encoding="utf-8")
    out = folder / f"lib{name}.so"
    subprocess.run([str(CC), "-shared", "-fPIC", "-o", str(out), str(src), *flags], check=True, capture_output=True)
    return out


@needs_cc
def test_needed_versions_and_symbols_of_a_real_library(tmp_path: Path) -> None:
    lib = compile_so(
        tmp_path,
        "uses",
        '#include <math.h>\n#include <string.h>\ndouble f(double x){return hypot(x, x) + strlen("a");}',
        "-lm",
    )
    info = read_elf(lib, symbols=True)
    assert info is not None and "libm.so.6" in info.needed
    libm_versions = info.versions["libm.so.6"]
    assert any("hypot" in names for names in libm_versions.values())
    floor = glibc_floor([lib])
    assert floor.version >= (2, 2, 5)
    assert any(lib.name in path for path in floor.culprits)


def test_glibc_version_names() -> None:
    assert glibc_version("GLIBC_2.35") == (2, 35)
    assert glibc_version("GLIBC_2.2.5") == (2, 2, 5)
    assert glibc_version("GLIBC_PRIVATE") is None and glibc_version("GLIBCXX_3.4.29") is None


def test_the_floor_of_the_interpreters_extensions_is_plausible() -> None:
    spec = importlib.util.find_spec("_ssl")
    assert spec is not None and spec.origin
    floor = glibc_floor([Path(spec.origin)])
    assert (2, 2) <= floor.version < (3, 0)
    assert read_elf(Path(__file__)) is None  # not ELF
    assert read_elf(Path("/nonexistent.so")) is None


@needs_cc
def test_clean_rpath_removes_build_machine_entries_and_keeps_origin(tmp_path: Path) -> None:
    """An absolute RPATH goes (the entry leaves the dynamic section); $ORIGIN entries stay; the library
    still loads and still finds what its $ORIGIN RPATH points to."""
    dep_dir = tmp_path / "sub"
    dep_dir.mkdir()
    compile_so(dep_dir, "dep", "int dep(void){return 41;}")
    main = compile_so(
        tmp_path, "main", "int dep(void); int f(void){return dep() + 1;}",
        f"-L{dep_dir}", "-ldep", "-Wl,--disable-new-dtags", "-Wl,-rpath,/root/.pyenv/versions/3.11.7/lib:$ORIGIN/sub",
    )  # fmt: skip
    assert read_elf(main).rpath == "/root/.pyenv/versions/3.11.7/lib:$ORIGIN/sub"  # type: ignore[union-attr]
    assert clean_rpath(main) == "/root/.pyenv/versions/3.11.7/lib"
    info = read_elf(main)
    assert info is not None and info.rpath == "$ORIGIN/sub" and info.needed[:1] == ["libdep.so"]
    assert ctypes.CDLL(str(main)).f() == 42
    assert clean_rpath(main) is None  # nothing left to do

    only_abs = compile_so(tmp_path, "abs", "int g(void){return 1;}", "-Wl,-rpath,/build/machine/lib")
    assert clean_rpath(only_abs) == "/build/machine/lib"
    info = read_elf(only_abs)
    assert info is not None and info.rpath is None and info.runpath is None
    assert ctypes.CDLL(str(only_abs)).g() == 1
    readelf = shutil.which("readelf")
    if readelf:  # the system's own tool agrees
        dynamic = subprocess.run([readelf, "-d", str(only_abs)], capture_output=True, text=True, check=True).stdout
        assert "RPATH" not in dynamic and "RUNPATH" not in dynamic
