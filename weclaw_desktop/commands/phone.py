"""``weclaw phone``: run the phone link without the window (QR code in the terminal, optional --send)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from weclaw_desktop.i18n import tr


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "phone", help="run the phone link in the terminal: pair a phone, send files, receive files"
    )
    p.add_argument("--host", default="", help="address to bind (default: settings, else the LAN address)")
    p.add_argument("--port", type=int, default=None, help="port (default: settings, 8765)")
    p.add_argument("--yes", action="store_true", help="accept new phones without asking")
    p.add_argument(
        "--send",
        nargs="+",
        metavar="FILE",
        help="send these files to the most recent phone, wait until they are saved there, then exit "
        "(exit 0: all saved on the phone; 2: all on the phone, some not saved yet; 1: otherwise)",
    )
    p.add_argument("--wait", type=float, default=300.0, help="seconds to wait for the phone with --send")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 130


async def _ask(req: Any) -> bool:
    answer = await asyncio.to_thread(input, "\n" + tr("cli.phone.ask", name=req.name, address=req.address) + " ")
    return answer.strip().lower() in ("y", "yes", "是", "允许")


async def _main(args: argparse.Namespace) -> int:
    from weclaw_desktop.companion import CompanionEvent, CompanionService, EventKind, FileState
    from weclaw_desktop.companion.qr import qr_text
    from weclaw_desktop.settings import SettingsStore

    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)  # events show up at once, even through a pipe
    settings = SettingsStore.open().snapshot().companion  # --yes changes this run only
    if args.yes:
        settings.auto_accept = True
    service = CompanionService(settings)
    service.accept_device = _ask

    def show(event: CompanionEvent) -> None:
        if event.kind is EventKind.FILE_RECEIVED:
            print(tr("cli.phone.received", name=event.data["name"], n=event.data["size"], path=event.data["path"]))
        elif event.kind in (EventKind.DEVICE_PAIRED, EventKind.DEVICE_ONLINE, EventKind.DEVICE_OFFLINE):
            print(tr(f"cli.phone.{event.kind.value}", device=event.device_name))
        elif event.kind is EventKind.FILE_READY:
            print(tr("cli.phone.ready", name=event.data["name"]))
        elif event.kind is EventKind.DELIVERY_ACKNOWLEDGED:
            print(tr("cli.phone.delivered", name=event.data["name"], sha256=event.data["sha256"]))
        elif event.kind is EventKind.TRANSFER_FAILED:
            print(tr("cli.phone.failed", name=event.data.get("name", ""), reason=event.data["reason"]))

    service.events.subscribe(show)
    try:
        await service.start(args.host or None, args.port)
    except OSError as exc:
        where = args.host or settings.interface or tr("cli.phone.lan_address")
        print(tr("cli.error", message=tr("cli.phone.cannot_listen", address=where, reason=exc)), file=sys.stderr)
        return 1
    try:
        devices = await service.list_devices()
        if args.send:
            if not devices:
                print(tr("cli.phone.none_paired"), file=sys.stderr)
                return 1
            paths = await asyncio.to_thread(lambda: [Path(p).expanduser().resolve(strict=True) for p in args.send])
            transfer = await service.send_files(paths, device_id=devices[0].id)
            print(tr("cli.phone.offered", n=len(transfer.files), device=devices[0].name, url=service.base_url))
            done = await transfer.wait(args.wait)  # until every file is saved on the phone, failed or cancelled
            for f in sorted(transfer.files.values(), key=lambda f: f.seq):
                print(f"{f.name}: {tr(f'cli.phone.state.{f.state.value}')} {f.error}".rstrip())
            states = {f.state for f in transfer.files.values()}
            if done and states == {FileState.DELIVERED}:
                return 0
            return 2 if states <= {FileState.DELIVERED, FileState.READY} else 1
        code = service.new_pairing_code()
        print(qr_text(code.url))
        print(tr("cli.phone.scan", url=code.url))
        if not service.keys_persistent:
            print(tr("cli.phone.no_keyring"))
        paired = ", ".join(d.name for d in devices) or tr("cli.phone.no_phones")
        print(tr("cli.phone.status", devices=paired, folder=service.incoming_dir))
        await asyncio.Event().wait()  # until Ctrl+C
        return 0
    finally:
        await service.stop()
