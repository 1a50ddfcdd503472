"""Pure helpers of the email tool: e-mail addresses (moved from tests/tools_c/test_parsing.py)."""

from __future__ import annotations

import pytest

from weclaw_desktop.tools.email_message import AddressError, parse_mailbox, parse_mailboxes


def test_addresses() -> None:
    assert parse_mailbox("Li Lei <li@例子.中国>").address == "li@xn--fsqu00a.xn--fiqs8s"
    assert [m.address for m in parse_mailboxes(['"Wang, Fang" <f@x.com>; b@y.com, B@Y.com'])] == ["f@x.com", "b@y.com"]
    for bad in ("bob", "bob@localhost", ".a@b.com", "a@-b.com", "a b@c.com", "a@b.com, c@d.com", "A <a@b.com"):
        with pytest.raises(AddressError):
            parse_mailbox(bad)
