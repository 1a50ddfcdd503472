"""notify: desktop notifications through the Dispatcher, with a recording notifier bridge injected."""

from __future__ import annotations

from toolrun import Run
from tools.fake_bridges import RecordingNotifier

from weclaw_desktop.toolkit import ToolStatus


async def test_notify_send(run: Run) -> None:
    notifier = RecordingNotifier()
    run.registry.inject({"notifier": notifier})
    res = await run("notify_send", title=" 下载完成 ", message="report.pdf is ready", urgent=True)
    assert res.succeeded, res.output
    assert notifier.sent == [("下载完成", "report.pdf is ready", True)]
    res = await run("notify_send", message="Default title")
    assert notifier.sent[-1] == ("WeClaw", "Default title", False)


async def test_notify_bad_input_sends_nothing(run: Run) -> None:
    notifier = RecordingNotifier()
    run.registry.inject({"notifier": notifier})
    for args, message in [
        ({"message": "   "}, "message: Value error, must not be blank"),
        ({"title": "x" * 101, "message": "hi"}, "title:"),
        ({"message": "x" * 1001}, "message:"),
        ({"title": "t"}, "message: Field required"),
    ]:
        res = await run("notify_send", **args)
        assert res.status is ToolStatus.ERROR, args
        assert message in res.output
    assert notifier.sent == []
