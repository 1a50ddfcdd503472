"""The Qt phone dialog, offscreen, with a real server on 127.0.0.1 (no exec(), no qtbot.wait on qasync)."""

from __future__ import annotations

import asyncio
from typing import Any

from companion_helpers import Refused, Rig, pair_phone, wait_for
from PySide6.QtWidgets import QMessageBox

from weclaw_desktop.i18n import set_language
from weclaw_desktop.ui.pairing_dialog import DeviceApprover, PairingDialog


async def post_pair(rig: Rig, url: str, name: str = "Test phone") -> int:
    """What the page does with the QR code's URL; the HTTP status of the pairing."""
    try:
        await pair_phone(rig.http, url, name)
    except Refused as refused:
        return refused.status
    return 200


async def test_dialog_shows_the_code_lists_and_removes_phones(rig: Rig, qtbot: Any) -> None:
    saved: list[bool] = []
    dialog = PairingDialog(rig.service, on_settings_changed=lambda: saved.append(True))
    qtbot.addWidget(dialog)
    dialog.show()
    await dialog.idle()
    assert dialog.code is not None
    assert dialog.url.text() == dialog.code.url and dialog.code.url.startswith(f"{rig.base}/#s=")
    assert not dialog.qr.pixmap().isNull()
    assert "expires in 4:5" in dialog.expiry.text() or "expires in 5:00" in dialog.expiry.text()
    assert dialog.empty.isVisible() and not dialog.devices.isVisible()

    first = dialog.code.url
    assert await post_pair(rig, first, "Pixel 7") == 200
    await wait_for(lambda: dialog.devices.topLevelItemCount() == 1)
    await dialog.idle()
    item = dialog.devices.topLevelItem(0)
    assert (item.text(0), item.text(2)) == ("Pixel 7", "just now")
    assert dialog.code.url != first  # a used code is replaced at once

    dialog.devices.itemWidget(item, 3).click()
    await wait_for(lambda: dialog.devices.topLevelItemCount() == 0)
    await dialog.idle()
    assert await rig.service.list_devices() == []

    rig.service.settings.interface, rig.service.settings.port = "127.0.0.1", 0  # tests bind loopback only
    dialog.link.setChecked(False)
    await dialog.idle()
    assert not rig.service.running and dialog.code is None and "Turn on" in dialog.hint.text()
    dialog.link.setChecked(True)
    await dialog.idle()
    assert rig.service.running and rig.service.host == "127.0.0.1"
    assert dialog.url.text().startswith(rig.service.base_url + "/#s=")
    assert saved and rig.service.settings.enabled is True


async def test_a_new_phone_needs_the_users_yes(rig: Rig, qtbot: Any) -> None:
    rig.service.settings.auto_accept = False
    set_language("zh")  # the question is asked in the UI language
    dialog = PairingDialog(rig.service)
    qtbot.addWidget(dialog)
    approver = rig.service.accept_device
    assert isinstance(approver, DeviceApprover)

    async def answer(button: QMessageBox.StandardButton, name: str) -> int:
        task = asyncio.ensure_future(post_pair(rig, rig.service.new_pairing_code().url, name))
        await wait_for(lambda: approver.box is not None)
        assert approver.box is not None
        assert name in approver.box.text() and "请求与这台电脑配对" in approver.box.text()
        approver.box.button(button).click()
        return await task

    assert await answer(QMessageBox.StandardButton.No, "Stranger") == 403
    assert await answer(QMessageBox.StandardButton.Yes, "My phone") == 200
    assert [d.name for d in await rig.service.list_devices()] == ["My phone"]
    await dialog.idle()
