"""Where time zones come from: the system's database, else the ``tzdata`` package bundled with the app.

zoneinfo looks in its ``TZPATH`` folders (``/usr/share/zoneinfo`` ...) and falls back to ``tzdata`` by
itself; this only says which one is in use, for the self-test and ``weclaw doctor``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

PROBE_ZONE = "Asia/Shanghai"


@dataclass(frozen=True)
class ZoneDatabase:
    source: str  # "system", "bundled" or "none"
    where: str

    @property
    def text(self) -> str:
        if self.source == "system":
            return f"time zones from the system database in {self.where}"
        if self.source == "bundled":
            return (
                f"no system time zone database; using the tzdata package shipped with WeClaw ({self.where}); "
                "install the system's tzdata package to get updates with the system"
            )
        return "no time zone database: install the tzdata package (Linux) or `pip install tzdata`"


def zone_database() -> ZoneDatabase:
    import zoneinfo

    for folder in zoneinfo.TZPATH:
        if os.path.isfile(os.path.join(folder, PROBE_ZONE)):
            return ZoneDatabase("system", folder)
    try:
        from importlib.resources import files

        import tzdata

        if files("tzdata").joinpath("zoneinfo", *PROBE_ZONE.split("/")).is_file():
            return ZoneDatabase("bundled", f"tzdata {getattr(tzdata, 'IANA_VERSION', '?')}")
    except (ImportError, OSError):
        pass
    return ZoneDatabase("none", "")
