"""Screenshots of Settings > MCP (the settings dialog at its default and smallest size, each tab, after a
Test against our SDK server) and of an elicitation form and a sampling request, in English and Chinese.

    xvfb-run -a -s "-screen 0 1400x900x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=. python scripts/mcp_shots.py OUT

Writes PNGs to OUT (default /tmp/mcp-shots) and prints their paths. Uses a throwaway WECLAW_HOME and an
in-memory keyring; nothing of the user's is read or written.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WECLAW_HOME", tempfile.mkdtemp(prefix="mcp-shots-"))


def _memory_keyring() -> None:
    import keyring
    import keyring.backend

    class Memory(keyring.backend.KeyringBackend):
        priority = 1  # type: ignore[assignment]
        store: ClassVar[dict[tuple[str, str], str]] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.store.pop((service, username), None)

    keyring.set_keyring(Memory())


async def shots(out: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication, QWidget

    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.mcp.interact import FormRequest, SamplingRequest, form_fields
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
    from weclaw_desktop.ui.mcp_dialogs import ElicitationDialog, SamplingDialog
    from weclaw_desktop.ui.mcp_page import McpPage
    from weclaw_desktop.ui.settings_dialog import SettingsDialog

    sys.path.insert(0, str(ROOT / "tests" / "mcp"))
    from sdk_server import ELICIT_SCHEMA  # type: ignore[import-not-found]

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    written: list[Path] = []

    async def grab(widget: QWidget, name: str) -> None:
        for _ in range(10):
            app.processEvents()
            await asyncio.sleep(0.03)
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        written.append(path)

    settings = Settings(
        mcp_servers=[
            McpServerSettings(
                name="sdk",
                command=sys.executable,
                args=[str(ROOT / "tests" / "mcp" / "sdk_server.py")],
                trusted=True,
                keywords=["文件树", "tree"],
                tool_approval={"fetch_page": "deny", "lookup": "allow"},
            ),
            McpServerSettings(
                name="github",
                command="npx",
                args=["-y", "@modelcontextprotocol/server-github"],
                secret_env=["GITHUB_PERSONAL_ACCESS_TOKEN"],
            ),
            McpServerSettings(name="cloud", transport="http", url="https://mcp.example.com/mcp", auth="oauth"),
            McpServerSettings(name="legacy", transport="sse", url="https://old.example.com/sse", enabled=False),
        ]
    )
    for lang in ("en", "zh"):
        set_language(lang)
        store = SettingsStore(app_paths(), settings=settings)
        page = McpPage(SecretStore())
        dialog = SettingsDialog(store, SecretStore(), extra_pages=[("MCP", page)])
        dialog.show()
        dialog.show_page(len(dialog.pages) - 1)
        page.retranslate()
        for size, label in ((dialog.size(), "default"), (dialog.minimumSize(), "smallest")):
            dialog.resize(size)
            page.server_list.setCurrentRow(0)
            page.tabs.setCurrentIndex(0)
            await grab(dialog, f"mcp-page-{lang}-{label}-connection")
        dialog.resize(1000, 700)
        task = page.start_test()
        assert task is not None
        await asyncio.wait_for(task, 40)
        await grab(dialog, f"mcp-page-{lang}-tools")
        page.tabs.setCurrentIndex(1)
        await grab(dialog, f"mcp-page-{lang}-behaviour")
        page.server_list.setCurrentRow(2)
        page.tabs.setCurrentIndex(0)
        await grab(dialog, f"mcp-page-{lang}-remote")
        json_dialog = page.open_json()
        assert json_dialog is not None
        await grab(json_dialog, f"mcp-json-{lang}")
        json_dialog.close()
        import_dialog = page.open_import()
        import_dialog.text.setPlainText(
            '{"mcpServers": {"brave": {"command": "npx", "args": ["-y", "brave"], "env": {"BRAVE_API_KEY": "k-123", "LOG": "1"}},'
            ' "天气": {"url": "https://weather.example.com/sse"}}}'
        )
        await grab(import_dialog, f"mcp-import-{lang}")
        import_dialog.close()
        dialog.close()

        form = FormRequest(
            server="sdk",
            message="Who are you?" if lang == "en" else "你是谁？",
            fields=form_fields(ELICIT_SCHEMA),
            schema=ELICIT_SCHEMA,
        )
        elicit = ElicitationDialog(form)
        elicit.show()
        await grab(elicit, f"elicitation-{lang}")
        elicit.inputs["age"].setText("200")  # type: ignore[attr-defined]
        elicit.submit_button.click()
        await grab(elicit, f"elicitation-{lang}-invalid")
        elicit.finish(
            elicit.answer or __import__("weclaw_desktop.mcp.interact", fromlist=["ElicitAnswer"]).ElicitAnswer("cancel")
        )
        sampling = SamplingDialog(
            SamplingRequest(
                server="sdk",
                messages=(("user", "Summarise: a long text about cats."),),
                system_prompt="You write one-line summaries.",
                max_tokens=50,
            )
        )
        sampling.show()
        await grab(sampling, f"sampling-{lang}")
        sampling.finish(False)
    return written


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mcp-shots")
    out.mkdir(parents=True, exist_ok=True)
    _memory_keyring()
    from weclaw_desktop.ui.boot import qt_application

    app = qt_application([])
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        written = loop.run_until_complete(shots(out))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
