"""A chat out of WeClaw and back in: JSON (everything, every branch; importable), Markdown (the active branch,
tool calls as readable blocks) and self-contained HTML (the same, styled, images embedded).

``weclaw export SESSION --format md|html|json`` and ``weclaw import FILE`` use it, and so does the desktop app."""

from weclaw_desktop.agent.export.dump import FORMAT, ChatImportError, export_json, import_json
from weclaw_desktop.agent.export.render import export_html, export_markdown

__all__ = ["FORMAT", "ChatImportError", "export_html", "export_json", "export_markdown", "import_json"]
