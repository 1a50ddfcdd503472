"""remote_file_share through the real registry and dispatcher, with a phone client on loopback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from companion_helpers import Phone, Rig, make_file, sha, wait_for
from polling import until
from toolrun import Direct

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.base import ToolContext, ToolStatus
from weclaw_desktop.toolkit.dispatcher import ToolCall
from weclaw_desktop.toolkit.manifest import load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.tools.remote_file_share import LINK_OFF, PAIR_HINT


def registry(rig: Rig | None, **config: Any) -> ToolRegistry:
    reg = ToolRegistry(
        load_manifest(tools_json_path()),
        config_overrides={"remote_file_share": {"ack_timeout_s": 10, "offline_wait_s": 0.2, **config}},
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


async def phone_takes_everything(phone: Phone) -> list[str]:
    """What the phone page does: wait for offers, download each file, acknowledge with its own SHA-256."""
    got: list[str] = []
    while not got:
        async with await phone.get("/api/v1/offers") as r:
            offers = (await r.json())["offers"]
        for o in offers:
            for f in o["files"]:
                url = f"/api/v1/download?session={o['session']}&file={f['id']}&token={f['token']}"
                async with await phone.get(url, headers={"X-WeClaw-Verify": "1"}) as r:  # like the page
                    data = await r.read()
                ack = {"session": o["session"], "file": f["id"], "token": f["token"], "sha256": sha(data)}
                async with await phone.post("/api/v1/ack", json=ack) as r:
                    assert r.status == 200
                got.append(f["name"])
        await asyncio.sleep(0.02)
    return got


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


async def test_send_file_is_delivered_with_the_phones_sha(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair("Pixel")
    src = make_file(tmp_path / "docs", "report.pdf", 300_000)
    events = await phone.get("/api/v1/events")  # the page is open: the tool waits for the confirmation
    await wait_for(lambda: rig.service.is_online(phone.device_id))
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


async def test_send_files_reports_queued_when_the_phone_page_is_closed(rig: Rig, tmp_path: Path) -> None:
    await rig.pair("Offline phone")
    a = make_file(tmp_path, "a.txt", 5)
    b = make_file(tmp_path, "b.txt", 6)
    result = await call(registry(rig), tmp_path, "remote_file_share_send_files", {"paths": [str(a), str(b), str(a)]})
    assert result.status is ToolStatus.SUCCESS
    assert [f["state"] for f in result.data["files"]] == ["queued", "queued"]  # the duplicate is sent once
    assert "not connected now" in result.output and "6 hours" in result.output


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
    resp = await phone.get("/api/v1/events")
    await wait_for(lambda: rig.service.is_online(phone.device_id))
    src = make_file(tmp_path, "a.txt", 50)
    task = asyncio.ensure_future(call(registry(rig), tmp_path, "remote_file_share_send_file", {"path": str(src)}))

    async def listed() -> list[Any]:
        async with await phone.get("/api/v1/offers") as r:
            return list((await r.json())["offers"])

    offers = await until(listed, within=60, message="no offer reached the phone")
    f = offers[0]["files"][0]
    ack = {"session": offers[0]["session"], "file": f["id"], "token": f["token"], "error": "storage full"}
    async with await phone.post("/api/v1/ack", json=ack) as r:
        assert (await r.json())["state"] == "failed"
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
    assert rig.service._outgoing == {}
