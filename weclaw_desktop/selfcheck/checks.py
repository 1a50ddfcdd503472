"""The self-test's checks that need no Qt. Each returns its one-line detail or raises CheckFailed."""

from __future__ import annotations

import json
import ssl
import sys
from pathlib import Path

from weclaw_desktop.paths import AppPaths, resource_path, tools_json_path
from weclaw_desktop.selfcheck import keyring_check
from weclaw_desktop.selfcheck.fake_openai import REPLY, REPLY_PIECES, FakeOpenAI
from weclaw_desktop.selfcheck.report import CheckFailed
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.toolkit.validator import validate_path

PYTHON_SNIPPET = "print(6 * 7)"
PYTHON_EXPECTED = "42"


def bundle_dir() -> Path | None:
    """The bundle's folder when frozen (PyInstaller), else None."""
    if not getattr(sys, "frozen", False):
        return None
    return Path(sys.executable).resolve().parent


def check_paths(paths: AppPaths) -> str:
    tools_json = tools_json_path()
    if not tools_json.is_file():
        raise CheckFailed(f"tools.json not found at {tools_json}")
    icons = resource_path("icons")
    if not icons.is_dir() or not any(icons.iterdir()):
        raise CheckFailed(f"resources/icons missing or empty at {icons}")
    where = bundle_dir()
    if where is not None:
        for folder in (paths.data, paths.config, paths.logs, paths.cache):
            if folder.resolve().is_relative_to(where):
                raise CheckFailed(f"user data folder {folder} is inside the bundle {where}")
    mode = f"frozen in {where}" if where else "from source"
    return f"{mode}; data in {paths.data}; tools.json and resources found"


def build_registry() -> tuple[ToolRegistry, str]:
    registry = ToolRegistry.from_path(tools_json_path())
    declared = registry.tool_names(include_disabled=True)
    enabled = registry.tool_names()
    missing = [t for t in enabled if not registry.module_findable(t)]
    if missing:
        raise CheckFailed("tool modules missing from this build: " + ", ".join(missing))
    return registry, f"{len(declared)} tools declared, {len(enabled)} enabled, every module found"


def check_validation() -> str:
    report = validate_path(tools_json_path())
    if not report.ok:
        failed = [line for line in report.lines() if line.startswith("FAIL")]
        raise CheckFailed("tools.json validation: " + " | ".join(failed))
    warnings = sum(1 for c in report.checks if c.level.value == "warn")
    return f"{len(report.checks)} checks passed" + (f", {warnings} with warnings" if warnings else "")


def check_tls() -> str:
    import certifi

    from weclaw_desktop.net import ssl_context, trust

    bundle = Path(certifi.where())
    if not bundle.is_file():
        raise CheckFailed(f"certifi's CA bundle is missing at {bundle}: no HTTPS fallback without system CAs")
    fallback = ssl.create_default_context(cafile=str(bundle)).cert_store_stats().get("x509_ca", 0)
    if fallback < 50:
        raise CheckFailed(f"certifi's CA bundle holds only {fallback} CAs")
    ctx = ssl_context()
    if ctx.verify_mode is not ssl.CERT_REQUIRED or not ctx.check_hostname:
        raise CheckFailed("the outgoing SSL context does not verify certificates")
    found = trust()
    loaded = ctx.cert_store_stats().get("x509_ca", 0) if found.how == "file" else None
    if loaded == 0:
        raise CheckFailed(f"{found.where} holds no CA certificates")
    count = f", {loaded} CAs" if loaded else ""
    return f"trust from {found.text}{count}; certifi fallback has {fallback} CAs"


async def check_provider_stream() -> str:
    from weclaw_desktop.agent.provider import Provider, ProviderConfig

    pieces: list[str] = []
    async with FakeOpenAI() as server:
        provider = Provider(ProviderConfig(base_url=server.base_url, model=server.model, api_key="selftest-key"))
        try:
            completion = await provider.stream([{"role": "user", "content": "ping"}], on_text=pieces.append)
        finally:
            await provider.close()
    if completion.text != REPLY or completion.finish_reason != "stop":
        raise CheckFailed(f"got {completion.text!r} (finish {completion.finish_reason!r}), expected {REPLY!r}")
    if [p for p in pieces if p] != list(REPLY_PIECES):
        raise CheckFailed(f"text arrived as {pieces!r}, expected the {len(REPLY_PIECES)} streamed pieces")
    seen = server.requests
    if len(seen) != 1 or seen[0].authorization != "Bearer selftest-key" or seen[0].body.get("stream") is not True:
        raise CheckFailed(f"the endpoint saw an unexpected request: {[(r.path, r.body) for r in seen]}")
    return f"{len(pieces)} text deltas streamed through the openai SDK from {server.base_url}"


async def check_python_runner(registry: ToolRegistry, paths: AppPaths) -> str:
    from weclaw_desktop.toolkit.approval import ApprovalPolicy
    from weclaw_desktop.toolkit.base import Origin, ToolContext
    from weclaw_desktop.toolkit.dispatcher import Dispatcher, ToolCall
    from weclaw_desktop.toolkit.exposure import NO_ROUND
    from weclaw_desktop.toolkit.registry import function_name

    function = function_name("python_runner", "run")
    # The self-test approves its own snippet, as a user would ("always allow" for this one function).
    dispatcher = Dispatcher(registry, approval_policy=ApprovalPolicy(remembered=[function]))
    ctx = ToolContext(origin=Origin.GUI, outputs_dir=paths.outputs, data_dir=paths.data, db=None)
    call = ToolCall(id="selftest-python", name=function, arguments=json.dumps({"code": PYTHON_SNIPPET}))
    # Not a model round (NO_ROUND) and no one to ask (gate None): the remembered approval lets it run.
    result = (await dispatcher.dispatch(call, ctx, gate=None, offered=NO_ROUND)).result
    data = result.data if isinstance(result.data, dict) else {}
    stdout = result.output.split("--- stdout ---\n", 1)[-1].split("\n---", 1)[0].strip()
    if not result.succeeded or data.get("exit_code") != 0 or stdout != PYTHON_EXPECTED:
        raise CheckFailed(f"python_runner: {result.status.value}: {result.output[-300:]}")
    how = "the app with --run-python" if getattr(sys, "frozen", False) else "sys.executable"
    return f"{PYTHON_SNIPPET} -> {stdout} via {how} in {data.get('duration_s')} s"


def check_keyring() -> str:
    from weclaw_desktop.secrets import backend_name

    modules = keyring_check.native_modules()
    if keyring_check.platform_key() == "linux":
        keyring_check.secret_service_crypto_roundtrip()
        extra = "; Secret Service DH+AES round trip ok"
    else:
        extra = ""
    return f"active {backend_name()}; native backend and deps import ({len(modules)} modules){extra}"


def check_keyring_backends() -> str:
    summary = keyring_check.backend_summary()
    if not summary:
        raise CheckFailed("keyring found no backends at all (entry points missing from the build?)")
    return summary
