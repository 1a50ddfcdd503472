"""Which address to serve the phone page on. Blocking (psutil, sockets): call through asyncio.to_thread."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from dataclasses import dataclass

import psutil

#: A public address used only to ask the OS which local address routes there: a UDP connect() sends nothing.
_PROBE = ("192.0.2.1", 9)  # TEST-NET-1; any routable-looking address works without sending packets


@dataclass(frozen=True)
class Interface:
    name: str
    address: str
    is_default: bool = False

    @property
    def label(self) -> str:
        return f"{self.address} ({self.name})" + (" *" if self.is_default else "")


def default_route_address() -> str | None:
    """The IPv4 address of the interface with the default route, found without sending traffic."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.connect(_PROBE)
        address = str(sock.getsockname()[0])
    except OSError:
        return None
    finally:
        sock.close()
    return None if address.startswith(("0.", "127.")) else address


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified)


def candidate_interfaces(*, include_loopback: bool = False) -> list[Interface]:
    """IPv4 addresses a phone on the LAN could reach, the default-route one first."""
    default = default_route_address()
    found: list[Interface] = []
    stats: dict[str, object] = {}
    with contextlib.suppress(OSError):
        stats = dict(psutil.net_if_stats())
    for name, addrs in psutil.net_if_addrs().items():
        st = stats.get(name)
        if st is not None and not getattr(st, "isup", True):
            continue
        for a in addrs:
            if a.family != socket.AF_INET:
                continue
            if _usable(a.address) or (include_loopback and a.address.startswith("127.")):
                found.append(Interface(name, a.address, a.address == default))
    found.sort(key=lambda i: (not i.is_default, i.address.startswith("127."), i.name))
    if default and not any(i.address == default for i in found):
        found.insert(0, Interface("default", default, True))
    return found


def choose_address(preferred: str = "") -> str:
    """``preferred`` if it is an address of this machine, else the default-route address, else loopback."""
    if preferred:
        local = {i.address for i in candidate_interfaces(include_loopback=True)}
        if preferred in local or preferred.startswith("127."):
            return preferred
    return default_route_address() or next((i.address for i in candidate_interfaces()), "127.0.0.1")
