"""The model client is built off the event loop's thread (on the GUI that loop is the Qt thread): its TLS
trust (the CA file) and the http client's first set-up took ~0.3 s of the UI thread at the first message.

What must survive: the first request and the first request after a switch of configuration both build
their client in a worker thread; the CA file is loaded once per process however many providers are
built; the connection verifies the server's certificate (a real https fake server whose CA is in the
trusted bundle, and one that is not: refused).
"""

from __future__ import annotations

import ssl
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import TEST_KEY
from fakeopenai import FakeOpenAI, text_reply

from weclaw_desktop import net
from weclaw_desktop.agent.provider import Provider, ProviderConfig, ProviderError
from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.settings import ProviderSettings, Settings
from weclaw_desktop.toolkit.base import Origin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from smtp_server import make_certificate  # a throwaway certificate for 127.0.0.1


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A certificate for 127.0.0.1, trusted through SSL_CERT_FILE (the system's CAs plus it, so loading the
    bundle costs what it costs on a user's machine); this process's trust decided again, and after."""
    cert, key = make_certificate(tmp_path)
    system = ssl.get_default_verify_paths().cafile
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes((Path(system).read_bytes() if system else b"") + b"\n" + cert.read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    monkeypatch.setattr(net, "_shared", None)
    net.trust.cache_clear()
    yield cert, key
    net.trust.cache_clear()


@pytest.fixture
async def https_fake(trusted_ca: tuple[Path, Path]) -> AsyncIterator[FakeOpenAI]:
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(*trusted_ca)
    server = FakeOpenAI(tls=server_ctx)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def _entry(server: FakeOpenAI, name: str, model: str) -> ProviderSettings:
    return ProviderSettings(name=name, preset="custom", base_url=server.base_url, model=model, max_retries=0)


async def test_first_request_and_a_switch_build_their_client_in_a_worker_thread(
    https_fake: FakeOpenAI, tools_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built_on: list[str] = []
    contexts: list[ssl.SSLContext] = []
    real_build, real_context = Provider._build_client, net.ssl_context

    def build(self: Provider) -> Any:
        built_on.append(threading.current_thread().name)
        return real_build(self)

    def context() -> ssl.SSLContext:
        contexts.append(real_context())
        return contexts[-1]

    monkeypatch.setattr(Provider, "_build_client", build)
    monkeypatch.setattr(net, "ssl_context", context)
    settings = Settings()
    settings.providers.entries = [_entry(https_fake, "default", "fake-model"), _entry(https_fake, "other", "m2")]
    settings.providers.active = "default"
    settings.agent.exposure = "all"
    settings.agent.model_titles = False
    rt = AgentRuntime.create(settings, api_key=TEST_KEY, origin=Origin.CLI, tools_json=tools_json)
    try:
        https_fake.push(text_reply("over ", "https"), text_reply("after ", "the switch"))
        session = await rt.create_session()
        first = await rt.start_turn(session.id, "hi").wait()
        assert first.text == "over https"
        switched = rt.settings.model_copy(deep=True)
        switched.providers.active = "other"
        rt.apply_settings(switched, {"providers"})
        later = await rt.create_session()  # a new chat: on the configuration now active
        second = await rt.start_turn(later.id, "again").wait()
        assert second.text == "after the switch"
        assert https_fake.requests[-1]["model"] == "m2"
    finally:
        await rt.close()
    main = threading.main_thread().name
    assert len(built_on) == 2 and main not in built_on, built_on
    assert len(contexts) == 1  # the CA file was loaded once for both providers


async def test_a_server_outside_the_trust_is_refused(tmp_path: Path, https_fake: FakeOpenAI) -> None:
    """The shared context still verifies: a server whose certificate is not in the bundle is refused."""
    (tmp_path / "other").mkdir()
    other_cert, other_key = make_certificate(tmp_path / "other")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(other_cert, other_key)
    stranger = FakeOpenAI(tls=ctx)
    await stranger.start()
    provider = Provider(ProviderConfig(base_url=stranger.base_url, model="fake-model", api_key=TEST_KEY, max_retries=0))
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.list_models()
        causes: list[BaseException] = []
        cause: BaseException | None = caught.value
        while cause is not None:
            causes.append(cause)
            cause = cause.__cause__ or cause.__context__
        assert any(isinstance(c, ssl.SSLCertVerificationError) for c in causes), causes
        trusted = Provider(ProviderConfig(base_url=https_fake.base_url, model="fake-model", api_key=TEST_KEY))
        assert "fake-model" in await trusted.list_models()
        await trusted.close()
    finally:
        await provider.close()
        await stranger.stop()
