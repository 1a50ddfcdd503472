"""``weclaw phone``: run the phone link without the window (QR code in the terminal, optional --send)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any


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
    answer = await asyncio.to_thread(input, f"\n{req.name} ({req.address}) wants to pair. Allow? [y/N] ")
    return answer.strip().lower() in ("y", "yes", "是")


async def _main(args: argparse.Namespace) -> int:
    from weclaw_desktop.companion import CompanionEvent, CompanionService, EventKind, FileState
    from weclaw_desktop.companion.qr import qr_text
    from weclaw_desktop.settings import Settings

    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)  # events show up at once, even through a pipe
    settings = Settings.load().companion
    if args.yes:
        settings.auto_accept = True
    service = CompanionService(settings)
    service.accept_device = _ask

    def show(event: CompanionEvent) -> None:
        if event.kind is EventKind.FILE_RECEIVED:
            print(f"received {event.data['name']} ({event.data['size']} bytes) -> {event.data['path']}")
        elif event.kind in (EventKind.DEVICE_PAIRED, EventKind.DEVICE_ONLINE, EventKind.DEVICE_OFFLINE):
            print(f"{event.device_name}: {event.kind.value.replace('device_', '')}")
        elif event.kind is EventKind.FILE_READY:
            print(f"on the phone: {event.data['name']} (tap Save on the phone to keep it)")
        elif event.kind is EventKind.DELIVERY_ACKNOWLEDGED:
            print(f"delivered {event.data['name']} (saved on the phone; SHA-256 {event.data['sha256']})")
        elif event.kind is EventKind.TRANSFER_FAILED:
            print(f"failed {event.data.get('name', '')}: {event.data['reason']}")

    service.events.subscribe(show)
    try:
        await service.start(args.host or None, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {args.host or settings.interface or 'the LAN address'}: {exc}", file=sys.stderr)
        return 1
    try:
        devices = await service.list_devices()
        if args.send:
            if not devices:
                print("No phone is paired yet: run `weclaw phone` first and scan the QR code.", file=sys.stderr)
                return 1
            paths = await asyncio.to_thread(lambda: [Path(p).expanduser().resolve(strict=True) for p in args.send])
            transfer = await service.send_files(paths, device_id=devices[0].id)
            print(f"offered {len(transfer.files)} file(s) to {devices[0].name}; open {service.base_url} on the phone")
            done = await transfer.wait(args.wait)  # until every file is saved on the phone, failed or cancelled
            words = {
                FileState.DELIVERED: "delivered (saved on the phone)",
                FileState.READY: "on the phone, not saved yet (tap Save there)",
                FileState.SENDING: "not finished (the phone was fetching it)",
                FileState.QUEUED: "not fetched (the phone page was not open)",
            }
            for f in sorted(transfer.files.values(), key=lambda f: f.seq):
                print(f"{f.name}: {words.get(f.state, f.state.value)} {f.error}".rstrip())
            states = {f.state for f in transfer.files.values()}
            if done and states == {FileState.DELIVERED}:
                return 0
            return 2 if states <= {FileState.DELIVERED, FileState.READY} else 1
        code = service.new_pairing_code()
        print(qr_text(code.url))
        print(f"Scan with the phone's camera, or open {code.url}  (one use, 5 minutes; the part after # is the secret)")
        if not service.keys_persistent:
            print("No usable keyring: phones paired now must pair again after this program restarts.")
        print(f"Paired phones: {', '.join(d.name for d in devices) or 'none'}.  Files from the phone go to "
              f"{service.incoming_dir}.  Ctrl+C stops.")  # fmt: skip
        await asyncio.Event().wait()  # until Ctrl+C
        return 0
    finally:
        await service.stop()
