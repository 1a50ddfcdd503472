"""Fonts through fontconfig, the library Qt itself asks (loaded with ctypes, no Qt needed).

``FcInit`` builds fontconfig's process-wide configuration, which Qt then reuses (its font database calls
``FcInit`` too and finds it done), so counting the fonts first costs next to nothing.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

FC_SET_SYSTEM = 0
#: fontconfig's language tag for Simplified Chinese (matches fonts that cover it).
CJK_LANG = b"zh-cn"


class _FcFontSet(ctypes.Structure):
    _fields_ = [("nfont", ctypes.c_int), ("sfont", ctypes.c_int), ("fonts", ctypes.POINTER(ctypes.c_void_p))]


@dataclass(frozen=True)
class FontReport:
    count: int
    cjk_families: tuple[str, ...]
    error: str = ""

    @property
    def has_cjk(self) -> bool:
        return bool(self.cjk_families)


def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL("libfontconfig.so.1")
    lib.FcInit.restype = ctypes.c_int
    lib.FcConfigGetFonts.restype = ctypes.POINTER(_FcFontSet)
    lib.FcConfigGetFonts.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.FcNameParse.restype = ctypes.c_void_p
    lib.FcNameParse.argtypes = [ctypes.c_char_p]
    lib.FcObjectSetCreate.restype = ctypes.c_void_p
    lib.FcObjectSetAdd.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.FcFontList.restype = ctypes.POINTER(_FcFontSet)
    lib.FcFontList.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.FcPatternGetString.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.FcFontSetDestroy.argtypes = [ctypes.POINTER(_FcFontSet)]
    lib.FcPatternDestroy.argtypes = [ctypes.c_void_p]
    lib.FcObjectSetDestroy.argtypes = [ctypes.c_void_p]
    return lib


def font_report(*, cjk: bool = True) -> FontReport:
    """How many fonts fontconfig knows, and (``cjk``) the families that cover Chinese."""
    try:
        lib = _library()
    except (OSError, AttributeError) as exc:
        return FontReport(0, (), _loader_words(exc))
    if not lib.FcInit():
        return FontReport(0, (), "fontconfig could not read its configuration")
    fonts = lib.FcConfigGetFonts(None, FC_SET_SYSTEM)
    count = fonts.contents.nfont if fonts else 0
    families: list[str] = []
    if cjk and count:
        pattern = lib.FcNameParse(b":lang=" + CJK_LANG)
        objects = lib.FcObjectSetCreate()
        lib.FcObjectSetAdd(objects, b"family")
        found = lib.FcFontList(None, pattern, objects)
        if found:
            for i in range(found.contents.nfont):
                value = ctypes.c_char_p()
                if (
                    lib.FcPatternGetString(found.contents.fonts[i], b"family", 0, ctypes.byref(value)) == 0
                    and value.value
                ):
                    name = value.value.decode("utf-8", "replace")
                    if name not in families:
                        families.append(name)
            lib.FcFontSetDestroy(found)
        lib.FcObjectSetDestroy(objects)
        lib.FcPatternDestroy(pattern)
    # Simplified Chinese first (the families cover each other; SC is the one a zh-CN user expects)
    return FontReport(count, tuple(sorted(families, key=lambda f: (" SC" not in f and "CN" not in f, f))))


def _loader_words(exc: Exception) -> str:
    """The dynamic loader's reason (PyInstaller's ctypes hook replaces it with a guess about the build)."""
    if isinstance(exc, OSError):
        from pathlib import Path

        from weclaw_desktop.preflight.libs import missing_libraries, resolve, startup_library_path

        found = resolve("libfontconfig.so.1", Path("/"), None, None, startup_library_path())
        if found is None:
            return "libfontconfig.so.1 not found"
        missing = missing_libraries([found])
        if missing:
            return "it needs " + ", ".join(m.soname for m in missing)
    return str(exc)
