#!/usr/bin/env python3
"""Decode speed with and without a response_format schema, against a running `zse serve`.

    python3 bench/structured_output_speed.py --url http://localhost:8080 [--tokens 200] [--runs 3]

Each run samples (temperature 1, fixed seeds) a chat completion of --tokens tokens and reports completion tokens per
second of wall time (the prompt is a few tokens, so this is decode speed). The schema asks for an array of strings, so
a model that never wants to stop still writes --tokens tokens under the constraint.
"""
import argparse
import json
import time
import urllib.request

SCHEMA = {"type": "json_schema", "json_schema": {"name": "notes", "strict": True, "schema": {
    "type": "object", "properties": {"notes": {"type": "array", "items": {"type": "string"}}},
    "required": ["notes"], "additionalProperties": False}}}


def run(url, model, tokens, seed, response_format):
    body = {"model": model, "messages": [{"role": "user", "content": "Write notes."}], "max_tokens": tokens,
            "temperature": 1.0, "seed": seed}
    if response_format:
        body["response_format"] = response_format
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request) as r:
        out = json.load(r)
    elapsed = time.perf_counter() - start
    content = out["choices"][0]["message"]["content"]
    if response_format:
        json.loads(content)  # every constrained output parses
    return out["usage"]["completion_tokens"], elapsed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", default="http://localhost:8080")
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    with urllib.request.urlopen(args.url + "/v1/models") as r:
        model = json.load(r)["data"][0]["id"]
    print(f"model {model}, {args.tokens} tokens per run, {args.runs} runs after one warm-up")
    print(f"{'mode':<12} {'tokens':>7} {'seconds':>8} {'tok/s':>7}")
    for name, fmt in (("free", None), ("json_schema", SCHEMA)):
        run(args.url, model, args.tokens, 999, fmt)  # warm-up: JIT, and the schema's first masks
        total_tokens, total_seconds = 0, 0.0
        for seed in range(args.runs):
            n, s = run(args.url, model, args.tokens, seed, fmt)
            total_tokens += n
            total_seconds += s
        print(f"{name:<12} {total_tokens:>7} {total_seconds:>8.2f} {total_tokens / total_seconds:>7.1f}")


if __name__ == "__main__":
    main()
