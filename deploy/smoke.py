#!/usr/bin/env python3
"""Smoke test for a deployed ZSE server (Modal, RunPod, Knative or local): waits until the OpenAI API answers, then
streams one chat completion and prints it with the time to first token. Standard library only.

    python3 deploy/smoke.py --url https://WORKSPACE--zse.modal.run --api-key "$ZSE_API_KEY"
    python3 deploy/smoke.py --url http://localhost:8080
Exit status 0 when a non-empty completion streamed to `data: [DONE]`, 1 otherwise.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


def request(url: str, api_key: str, body: dict | None = None, timeout: float = 30) -> urllib.request.Request:
    headers = {"Accept": "text/event-stream" if body and body.get("stream") else "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    return urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")


def wait_for_model(base: str, api_key: str, timeout: float) -> str:
    """Polls GET /v1/models until it lists a model (a cold start answers 503, or the gateway holds the request)."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(request(f"{base}/v1/models", api_key), timeout=60) as response:
                models = json.load(response).get("data", [])
                if models:
                    return models[0]["id"]
                last = "the server lists no model"
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                sys.exit(f"smoke: {error.code} from {base}/v1/models: check the API key")
            last = f"HTTP {error.code}"
        except (urllib.error.URLError, OSError) as error:
            last = str(error)
        time.sleep(2)
    sys.exit(f"smoke: not ready after {timeout:.0f} s ({last})")


def stream_chat(base: str, api_key: str, model: str, prompt: str, max_tokens: int) -> int:
    body = {
        "model": model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": max_tokens,
        "messages": [{"role": "user", "content": prompt}],
    }
    start = time.monotonic()
    first_token = None
    text = []
    done = False
    with urllib.request.urlopen(request(f"{base}/v1/chat/completions", api_key, body), timeout=330) as response:
        for raw in response:
            line = raw.decode("utf-8").strip()
            if not line.startswith("data:"):
                continue
            payload = line[len("data:"):].strip()
            if payload == "[DONE]":
                done = True
                break
            chunk = json.loads(payload)
            for choice in chunk.get("choices", []):
                piece = choice.get("delta", {}).get("content") or ""
                if piece:
                    first_token = first_token or time.monotonic()
                    text.append(piece)
                    print(piece, end="", flush=True)
            if chunk.get("usage"):
                print(f"\nusage: {json.dumps(chunk['usage'])}", file=sys.stderr)
    total = time.monotonic() - start
    print()
    if not done or not text:
        print(f"smoke: FAILED (stream ended {'with' if done else 'without'} [DONE], {len(text)} pieces)", file=sys.stderr)
        return 1
    ttft = (first_token - start) * 1000
    print(f"smoke: OK model={model} first token {ttft:.0f} ms, {len(text)} pieces in {total:.2f} s", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="server base URL, without /v1")
    parser.add_argument("--api-key", default=os.environ.get("ZSE_API_KEY", ""), help="Bearer token (env ZSE_API_KEY)")
    parser.add_argument("--prompt", default="Write one sentence about the sea.")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--ready-timeout", type=float, default=900, help="seconds to wait for a cold start")
    args = parser.parse_args()
    base = args.url.rstrip("/")
    model = wait_for_model(base, args.api_key, args.ready_timeout)
    return stream_chat(base, args.api_key, model, args.prompt, args.max_tokens)


if __name__ == "__main__":
    sys.exit(main())
