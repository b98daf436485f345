# The Python openai SDK against a running zse serve (a model whose template has a tool-call format):
# forced and streamed tool calls, a tool result sent back, strict json_schema output, embeddings.
#   python3 -m venv v && v/bin/pip install openai && v/bin/python tools/clients/openai_python_check.py http://localhost:8080/v1
import json, sys
from openai import OpenAI
c = OpenAI(base_url=sys.argv[1], api_key="none")
model = c.models.list().data[0].id
tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                         "additionalProperties": False}}}]
checks = []
r = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Weather in Paris?"}], tools=tools,
                              tool_choice={"type": "function", "function": {"name": "get_weather"}}, max_tokens=64, seed=1)
call = r.choices[0].message.tool_calls[0]
checks.append(("forced call parsed", r.choices[0].finish_reason == "tool_calls" and call.function.name == "get_weather"
               and "city" in json.loads(call.function.arguments)))
s = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Weather?"}], tools=tools,
                              tool_choice="required", max_tokens=64, seed=2, stream=True)
name, args, finish = "", "", None
for chunk in s:
    if not chunk.choices:
        continue
    d = chunk.choices[0].delta
    for tc in d.tool_calls or []:
        name += tc.function.name or ""
        args += tc.function.arguments or ""
    finish = chunk.choices[0].finish_reason or finish
checks.append(("streamed call assembled", name == "get_weather" and finish == "tool_calls" and "city" in json.loads(args)))
follow = c.chat.completions.create(model=model, max_tokens=16, seed=3, messages=[
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": call.id, "type": "function",
     "function": {"name": "get_weather", "arguments": call.function.arguments}}]},
    {"role": "tool", "tool_call_id": call.id, "content": "sunny"}])
checks.append(("tool result accepted", follow.choices[0].message.content is not None))
schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
j = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "A person"}], max_tokens=64, seed=4,
                              response_format={"type": "json_schema", "json_schema": {"name": "p", "strict": True, "schema": schema}})
o = json.loads(j.choices[0].message.content)
checks.append(("json_schema output parses", set(o) == {"name", "age"} and isinstance(o["age"], int)))
e = c.embeddings.create(model=model, input=["hello", "world"])
checks.append(("embeddings (base64 by default)", len(e.data) == 2 and abs(sum(x * x for x in e.data[0].embedding) - 1) < 1e-3))
for name, ok in checks:
    print(("PASS " if ok else "FAIL ") + name)
sys.exit(0 if all(ok for _, ok in checks) else 1)
