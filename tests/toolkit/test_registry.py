"""The registry: lazy imports, the exact function table, configs, bridges, dynamic tools."""

from __future__ import annotations

import sys

import pytest
from helpers import base_manifest, manifest, tool_entry

from weclaw_desktop.toolkit import BaseTool, RegistryError, ToolLoadError, ToolRegistry
from weclaw_desktop.toolkit.manifest import Manifest, ToolSpec


def test_modules_are_imported_lazily() -> None:
    sys.modules.pop("sample_tools", None)
    registry = ToolRegistry(manifest())
    assert "sample_tools" not in sys.modules
    assert registry.resolve("echo_say") is not None  # the table needs no import
    registry.get("echo")
    assert "sample_tools" in sys.modules
    assert registry.is_loaded("echo") and not registry.is_loaded("faulty")


def test_function_table_is_exact_for_multi_word_names() -> None:
    data = base_manifest()
    data["tools"]["remote_file_share"] = tool_entry("EchoTool", ["say", "shout"])
    data["tools"]["remote"] = tool_entry("EchoTool", ["say", "shout"])
    registry = ToolRegistry(Manifest.model_validate(data))
    ref = registry.resolve("remote_file_share_say")
    assert ref is not None and (ref.tool, ref.action) == ("remote_file_share", "say")
    ref = registry.resolve("remote_say")
    assert ref is not None and (ref.tool, ref.action) == ("remote", "say")
    assert registry.resolve("remote_file") is None


def test_colliding_function_names_fail_loudly() -> None:
    data = base_manifest()
    data["tools"]["echo_say"] = tool_entry("EchoTool", ["say", "shout"])  # echo_say_say is fine ...
    data["tools"]["a_b"] = tool_entry("EchoTool", ["say", "shout"])
    data["tools"]["a"] = tool_entry("FaultyTool", ["crash", "refuse", "sleep", "nested"])
    data["tools"]["a"]["actions"] = ["b_say", "x"]  # ... but a + b_say == a_b + say
    with pytest.raises(RegistryError, match="'a_b_say' is produced twice"):
        ToolRegistry(Manifest.model_validate(data))


def test_config_is_validated_against_the_tool_config_model() -> None:
    data = base_manifest()
    data["tools"]["echo"]["config"] = {"prefix": ">> "}
    registry = ToolRegistry(Manifest.model_validate(data))
    tool = registry.get("echo")
    assert tool.config.prefix == ">> "
    assert tool.name == "echo"

    data["tools"]["echo"]["config"] = {"prefx": "x"}
    registry = ToolRegistry(Manifest.model_validate(data))
    with pytest.raises(ToolLoadError, match="invalid config: prefx: Extra inputs are not permitted"):
        registry.get("echo")


def test_config_overrides_from_settings_rebuild_the_tool() -> None:
    registry = ToolRegistry(manifest(), config_overrides={"echo": {"prefix": "A"}})
    assert registry.get("echo").config.prefix == "A"
    registry.set_config_overrides("echo", {"prefix": "B"})
    assert registry.get("echo").config.prefix == "B"


def test_missing_module_and_class_and_wrong_type() -> None:
    data = base_manifest()
    data["tools"]["ghost"] = tool_entry("EchoTool", ["say"], module="no_such_module_abc")
    data["tools"]["noclass"] = tool_entry("NoSuchClass", ["say"])
    data["tools"]["notatool"] = tool_entry("NotATool", ["say"])
    registry = ToolRegistry(Manifest.model_validate(data))
    with pytest.raises(ToolLoadError, match="module 'no_such_module_abc' cannot be imported"):
        registry.get("ghost")
    with pytest.raises(ToolLoadError, match="has no class 'NoSuchClass'"):
        registry.get("noclass")
    with pytest.raises(ToolLoadError, match="is not a BaseTool subclass"):
        registry.get("notatool")


def test_action_mismatch_is_reported_on_load() -> None:
    data = base_manifest()
    data["tools"]["echo"]["actions"] = ["say", "whisper"]
    registry = ToolRegistry(Manifest.model_validate(data))
    with pytest.raises(
        ToolLoadError, match=r"lists actions the class lacks: whisper.*defines actions tools.json lacks: shout"
    ):
        registry.get("echo")


def test_function_defs_are_openai_shaped_and_closed() -> None:
    registry = ToolRegistry(manifest())
    defs = registry.function_defs(["echo", "faulty"])
    names = [d["function"]["name"] for d in defs]
    assert names == ["echo_say", "echo_shout", "faulty_crash", "faulty_refuse", "faulty_sleep", "faulty_nested"]
    params = defs[0]["function"]["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert params["required"] == ["text"]
    assert "title" not in params and "title" not in params["properties"]["text"]
    nested = defs[-1]["function"]["parameters"]
    assert "$defs" not in nested and nested["properties"]["item"]["additionalProperties"] is False
    assert registry.function_defs(["echo"], exclude={"echo_shout"})[0]["function"]["name"] == "echo_say"


class _Clip:
    def __init__(self, text: str) -> None:
        self.text = text

    async def read_text(self) -> str:
        return self.text


def test_inject_reaches_loaded_and_later_loaded_tools_and_can_be_repeated() -> None:
    registry = ToolRegistry(manifest())
    tool = registry.get("bridged")
    assert not tool.has_bridge("clipboard")
    calls: list[int] = []
    registry.add_listener(lambda: calls.append(1))
    first = _Clip("one")
    registry.inject({"clipboard": first})
    assert tool.bridge("clipboard") is first
    second = _Clip("two")
    registry.inject({"clipboard": second})  # a bridge restarted
    assert tool.bridge("clipboard") is second
    registry.inject({"clipboard": None})
    assert not tool.has_bridge("clipboard")
    assert registry.bridge_names() == set()
    assert calls == [1, 1, 1]
    # echo does not declare the clipboard bridge, so it never receives it
    registry.inject({"clipboard": first})
    assert not registry.get("echo").has_bridge("clipboard")


def test_dynamic_tools_register_and_unregister() -> None:
    from sample_tools import EchoTool

    registry = ToolRegistry(manifest())
    spec = ToolSpec.model_validate(tool_entry("EchoTool", ["placeholder"]))
    registry.register_dynamic("mcp_demo", spec, EchoTool(name="x"))
    assert registry.resolve("mcp_demo_say") is not None
    assert registry.spec("mcp_demo").actions == ["say", "shout"]
    assert isinstance(registry.get("mcp_demo"), BaseTool)
    with pytest.raises(RegistryError, match=r"already declared in tools\.json"):
        registry.register_dynamic("echo", spec, EchoTool())
    registry.unregister_dynamic("mcp_demo")
    assert registry.resolve("mcp_demo_say") is None


def test_risk_is_the_stricter_of_manifest_and_class() -> None:
    registry = ToolRegistry(manifest())
    registry.get("echo")
    assert registry.risk_of("echo", "say").value == "low"
    assert registry.risk_of("echo", "shout").value == "high"  # the class says high, tools.json says low
