"""Checks behind ``weclaw --self-test`` that need no Qt (the Qt ones live in ``weclaw_desktop.ui.selftest``).

They run the same way from source and from the PyInstaller bundle, so a bundle that lost a module, a data
file or a keyring backend fails here instead of on a user's machine.
"""
