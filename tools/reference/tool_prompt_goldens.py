#!/usr/bin/env python3
"""Golden prompts for tool calling (src/test/resources/tool-calls/prompts.json).

Each case is an OpenAI chat request (tools, assistant messages with tool_calls whose arguments are JSON strings,
tool results with tool_call_id). It is turned into apply_chat_template's input the way the server does it (arguments
parsed into objects, a null assistant content as ""), then rendered by Hugging Face transformers'
tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False) with the real Qwen3
tokenizer and, set as its chat_template, the project's test templates for the other tool-call families.

    /work/peer/venv/bin/python tools/reference/tool_prompt_goldens.py

Tests never call Python; they read the JSON this writes.
"""
import copy
import json
import os
import sys

from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "src", "test", "resources", "tool-calls", "prompts.json")
QWEN3 = os.path.join(ROOT, "..", "shared", "tokenizers", "qwen3")
TEMPLATES = os.path.join(ROOT, "src", "test", "resources", "chat-templates")

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Zürich"},
        "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Local time in a time zone",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}}

CASES = {
    "ask": {"tools": [WEATHER, TIME], "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather in Zürich?"}]},
    "round_trip": {"tools": [WEATHER], "messages": [
        {"role": "user", "content": "Weather in Paris, in c?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "abc123XYZ", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"}}]},
        {"role": "tool", "tool_call_id": "abc123XYZ", "content": "{\"temp\": 21}"}]},
    "parallel": {"tools": [WEATHER, TIME], "messages": [
        {"role": "user", "content": "Weather and time in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call00001", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}},
            {"id": "call00002", "type": "function",
             "function": {"name": "get_time", "arguments": "{\"zone\":\"Europe/Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call00001", "content": "cloudy, 4 C"},
        {"role": "tool", "tool_call_id": "call00002", "content": "09:30"}]},
}


def server_messages(messages):
    """What the server hands the template: arguments as objects, no null content."""
    out = []
    for m in copy.deepcopy(messages):
        if m.get("content") is None:
            m["content"] = ""
        for call in m.get("tool_calls", []):
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        out.append(m)
    return out


def main():
    tokenizer = AutoTokenizer.from_pretrained(QWEN3)
    templates = {"qwen3": tokenizer.chat_template}
    for name in ("qwen2_5", "llama3_1_official", "mistral_v03"):
        with open(os.path.join(TEMPLATES, name + ".jinja"), encoding="utf-8") as f:
            templates[name] = f.read()
    out = {"bos_token": tokenizer.bos_token, "eos_token": tokenizer.eos_token, "cases": CASES, "expected": {}}
    for template_name, template in templates.items():
        for case_name, case in CASES.items():
            try:
                text = tokenizer.apply_chat_template(server_messages(case["messages"]), tools=case["tools"],
                                                     chat_template=template, add_generation_prompt=True, tokenize=False)
            except Exception as e:  # noqa: BLE001 - the Java renderer must fail on the same input
                text = "EXCEPTION " + type(e).__name__ + ": " + str(e)
            out["expected"][template_name + "__" + case_name] = text
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out['expected'])} prompts to {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
