"""open: open files, folders and URLs through the Dispatcher, with a recording desktop bridge injected."""

from __future__ import annotations

from pathlib import Path

from toolrun import Run
from tools.fake_bridges import RecordingDesktop

from weclaw_desktop.toolkit import ToolStatus


async def test_open_path_and_reveal(run: Run, home: Path) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    (home / "报告.pdf").write_bytes(b"%PDF")
    res = await run("open_path", path="~/报告.pdf")
    assert res.succeeded, res.output
    assert desktop.opened_paths == [(home / "报告.pdf").resolve()]
    assert res.data == {"path": str((home / "报告.pdf").resolve()), "kind": "file"}
    res = await run("open_path", path="~", reveal=False)
    assert res.data["kind"] == "folder"
    res = await run("open_path", path="~/报告.pdf", reveal=True)
    assert res.succeeded and desktop.revealed == [(home / "报告.pdf").resolve()]
    assert "in the file manager" in res.output


async def test_open_path_refusals(run: Run, home: Path) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    res = await run("open_path", path="~/missing.txt")
    assert res.status is ToolStatus.ERROR and "does not exist" in res.output
    res = await run("open_path", path="/etc/hosts")
    assert res.status is ToolStatus.ERROR and "outside the folders WeClaw may use" in res.output
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("key")
    res = await run("open_path", path="~/.ssh/id_rsa")
    assert res.status is ToolStatus.ERROR and "passwords, keys or browser data" in res.output
    (home / "install.sh").write_text("echo hi")
    res = await run("open_path", path="~/install.sh")
    assert res.status is ToolStatus.ERROR and "is a program or script; opening it would run it" in res.output
    assert desktop.opened_paths == []
    res = await run("open_path", path="~/install.sh", reveal=True)
    assert res.succeeded and desktop.revealed == [(home / "install.sh").resolve()]


async def test_open_url(run: Run) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    for url, opened in [
        ("https://example.com/a?b=1", "https://example.com/a?b=1"),
        ("example.com", "https://example.com"),
        ("mailto:someone@example.com?subject=Hi", "mailto:someone@example.com?subject=Hi"),
    ]:
        res = await run("open_url", url=url)
        assert res.succeeded, res.output
        assert desktop.opened_urls[-1] == opened


async def test_open_url_refusals(run: Run) -> None:
    desktop = RecordingDesktop()
    run.registry.inject({"desktop": desktop})
    for url, message in [
        ("file:///etc/passwd", "not 'file'"),
        ("javascript:alert(1)", "not 'javascript'"),
        ("ftp://example.com", "not 'ftp'"),
        ("mailto:", "has no e-mail address"),
        ("https://", "has no host name"),
    ]:
        res = await run("open_url", url=url)
        assert res.status is ToolStatus.ERROR, url
        assert message in res.output, res.output
    assert desktop.opened_urls == []


async def test_open_reports_when_the_system_cannot(run: Run, home: Path) -> None:
    run.registry.inject({"desktop": RecordingDesktop(succeed=False)})
    res = await run("open_url", url="https://example.com")
    assert res.status is ToolStatus.ERROR and "could not open https://example.com" in res.output
    (home / "a.txt").write_text("x")
    res = await run("open_path", path="~/a.txt")
    assert res.status is ToolStatus.ERROR and "could not open the file" in res.output
