"""The parts of the chat view: items (data), the virtualised column, message and notice widgets, rich text.

The facade is :class:`weclaw_desktop.ui.chat_view.ChatView`; its module docstring describes the API.
"""
