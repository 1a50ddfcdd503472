"""remote_file_share through the real registry and dispatcher, with a phone client on loopback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from companion_helpers import Phone, Rig, make_file, sha, wait_for
from polling import until
from toolrun import Direct

from weclaw_desktop.companion import crypto as c
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.base import ToolContext, ToolStatus
from weclaw_desktop.toolkit.dispatcher import ToolCall
from weclaw_desktop.toolkit.manifest import load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.tools.remote_file_share import LINK_OFF, PAIR_HINT


def registry(rig: Rig | None, **config: Any) -> ToolRegistry:
    reg = ToolRegistry(
        load_manifest(tools_json_path()),
        config_overrides={
            "remote_file_share": {"ack_timeout_s": 10, "offline_wait_s": 0.2, "tap_wait_s": 0.5, **config}
        },
    )
    if rig is not None:
        reg.inject({"companion": rig.service})
    return reg


def ctx(tmp_path: Path, progress: list[tuple[float | None, str]] | None = None) -> ToolContext:
    return ToolContext(
        outputs_dir=tmp_path / "outputs",
        data_dir=tmp_path,
        db=None,
        allowed_roots=[tmp_path],
        progress_callback=(lambda f, m: progress.append((f, m))) if progress is not None else (lambda f, m: None),
    )


async def call(reg: ToolRegistry, tmp_path: Path, fn: str, args: dict[str, Any], **kw: Any) -> Any:
    return await Direct(reg).dispatch(ToolCall("c1", fn, json.dumps(args)), ctx(tmp_path, **kw))


async def phone_takes_everything(phone: Phone, *, save: bool = True) -> list[str]:
    """What the phone page does: wait for offers, fetch each file, report it held, then (a tap) saved."""
    got: list[str] = []
    while not got:
        for o in await phone.offers():
            for f in o["files"]:
                await phone.download(o["offer"], f)
                await phone.call("/api/v1/ack", {"offer": o["offer"], "file": f["id"], "state": "ready"})
                if save:
                    await phone.call("/api/v1/ack", {"offer": o["offer"], "file": f["id"], "state": "saved"})
                got.append(f["name"])
        await asyncio.sleep(0.02)
    return got


async def open_page(rig: Rig, phone: Phone) -> aiohttp.ClientResponse:
    """The phone page is open: its event stream is connected."""
    await phone.open_session()
    headers, _ = phone.sign("GET", "/api/v1/events", "ev", c.digest(b""))
    resp = await rig.http.get(rig.base + "/api/v1/events", headers=headers)
    await wait_for(lambda: rig.service.is_online(phone.device_id))
    return resp


async def test_hidden_without_the_bridge_and_clear_error_when_called(tmp_path: Path) -> None:
    reg = registry(None)
    result = await call(reg, tmp_path, "remote_file_share_list_devices", {})
    assert result.status is not ToolStatus.SUCCESS
    assert "phone" in result.output.lower()


async def test_no_paired_phone_tells_how_to_pair(rig: Rig, tmp_path: Path) -> None:
    src = make_file(tmp_path, "a.txt", 10)
    result = await call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(src)})
    assert result.status is ToolStatus.ERROR
    assert result.output == PAIR_HINT
    listed = await call(registry(rig), tmp_path, "remote_file_share_list_devices", {})
    assert listed.status is ToolStatus.SUCCESS and listed.data == {"devices": [], "link_on": True}


async def test_link_off_says_how_to_turn_it_on(rig: Rig, tmp_path: Path) -> None:
    await rig.service.stop()
    result = await call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(tmp_path)})
    assert result.status is ToolStatus.ERROR
    assert LINK_OFF in result.output


async def test_send_file_is_delivered_only_when_saved_on_the_phone(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair("Pixel")
    src = make_file(tmp_path / "docs", "report.pdf", 300_000)
    events = await open_page(rig, phone)  # the page is open: the tool waits for the phone
    progress: list[tuple[float | None, str]] = []
    task = asyncio.ensure_future(
        call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(src)}, progress=progress)
    )
    assert await phone_takes_everything(phone) == ["report.pdf"]
    result = await task
    assert result.status is ToolStatus.SUCCESS, result.output
    assert result.data["files"] == [
        {"name": "report.pdf", "path": str(src), "size": 300_000, "state": "delivered", "sha256": sha(src.read_bytes())}
    ]
    assert result.data["device"]["name"] == "Pixel"
    assert "1 of 1 file(s) delivered" in result.output
    assert progress and progress[-1][0] == 1.0
    events.close()


async def test_held_but_not_saved_is_reported_as_ready_not_delivered(rig: Rig, tmp_path: Path) -> None:
    """The phone holds the file but nobody tapped Save: the tool says so, and does not call it delivered."""
    phone = await rig.pair("Pixel")
    src = make_file(tmp_path, "photo.jpg", 1000)
    events = await open_page(rig, phone)
    task = asyncio.ensure_future(call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(src)}))
    await phone_takes_everything(phone, save=False)
    result = await task
    assert result.status is ToolStatus.SUCCESS
    assert result.data["files"][0]["state"] == "ready"
    assert "0 of 1 file(s) delivered" in result.output and "tap Save" in result.output
    events.close()


async def test_send_files_reports_queued_when_the_phone_page_is_closed(rig: Rig, tmp_path: Path) -> None:
    await rig.pair("Offline phone")
    a = make_file(tmp_path, "a.txt", 5)
    b = make_file(tmp_path, "b.txt", 6)
    result = await call(registry(rig), tmp_path, "remote_file_share_send_files", {"paths": [str(a), str(b), str(a)]})
    assert result.status is ToolStatus.SUCCESS
    assert [f["state"] for f in result.data["files"]] == ["queued", "queued"]  # the duplicate is sent once
    assert "not connected now" in result.output and "7 days" in result.output


async def test_paths_go_through_pathguard(rig: Rig, tmp_path: Path) -> None:
    await rig.pair()
    reg = registry(rig)
    outside = await call(reg, tmp_path, "remote_file_share_send_file", {"path": "/etc/hostname"})
    assert outside.status is ToolStatus.ERROR and "outside the folders" in outside.output
    folder = await call(reg, tmp_path, "remote_file_share_send_file", {"path": str(tmp_path)})
    assert folder.status is ToolStatus.ERROR
    missing = await call(reg, tmp_path, "remote_file_share_send_file", {"path": str(tmp_path / "nope.txt")})
    assert missing.status is ToolStatus.ERROR and "does not exist" in missing.output
    empty = await call(reg, tmp_path, "remote_file_share_send_files", {"paths": []})
    assert empty.status is ToolStatus.ERROR


async def test_choosing_a_device_by_name(rig: Rig, tmp_path: Path) -> None:
    await rig.pair("Pixel 7")
    await rig.pair("iPhone")
    src = make_file(tmp_path, "a.txt", 5)
    reg = registry(rig)
    result = await call(reg, tmp_path, "remote_file_share_send_file", {"path": str(src), "device": "iphone"})
    assert result.data["device"]["name"] == "iPhone"
    unknown = await call(reg, tmp_path, "remote_file_share_send_file", {"path": str(src), "device": "Galaxy"})
    assert unknown.status is ToolStatus.ERROR and "Pixel 7" in unknown.output and "iPhone" in unknown.output
    listed = await call(reg, tmp_path, "remote_file_share_list_devices", {})
    assert sorted(d["name"] for d in listed.data["devices"]) == ["Pixel 7", "iPhone"]


async def test_failed_delivery_is_reported_with_the_reason(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    resp = await open_page(rig, phone)
    src = make_file(tmp_path, "a.txt", 50)
    task = asyncio.ensure_future(call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(src)}))
    offers = await until(phone.offers, within=60, message="no offer reached the phone")
    f = offers[0]["files"][0]
    ack = {"offer": offers[0]["offer"], "file": f["id"], "state": "failed", "reason": "storage full"}
    assert (await phone.call("/api/v1/ack", ack))["state"] == "failed"
    result = await task
    assert result.status is ToolStatus.ERROR
    assert result.data["files"][0]["reason"] == "the phone reported: storage full"
    resp.close()


def test_tools_json_declares_the_bridge_and_risk() -> None:
    spec = load_manifest(tools_json_path()).tools["remote_file_share"]
    assert spec.enabled and spec.bridges == ["companion"]
    assert spec.risk_of("send_files").value == "medium" and spec.risk_of("send_file").value == "low"


@pytest.mark.parametrize("bad", [{"path": 5}, {"paths": ["a"] * 101}, {"path": "a", "extra": 1}])
async def test_bad_arguments_are_refused_before_running(rig: Rig, tmp_path: Path, bad: dict[str, Any]) -> None:
    fn = "remote_file_share_send_files" if "paths" in bad else "remote_file_share_send_file"
    result = await call(registry(rig), tmp_path, fn, bad)
    assert result.status is ToolStatus.ERROR
    assert rig.service.outbox.offers == {}
