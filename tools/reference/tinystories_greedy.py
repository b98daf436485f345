#!/usr/bin/env python3
"""Golden greedy output of the real TinyStories-656K checkpoint, produced by Hugging Face transformers in float32.

Usage: python tinystories_greedy.py <model-dir> <output-json>
  e.g. /work/venv/bin/python tools/reference/tinystories_greedy.py ../shared/models/tinystories-656k \
           src/test/resources/golden/tinystories-656k-greedy-f32.json

For each prompt it writes the prompt ids (with the tokenizer's post-processor, i.e. <|start_story|> first), 64 greedy
ids, their decoded text, and at the first 8 steps the top-5 logits and log-probabilities of the next-token
distribution ("position" is the index of the token whose logits they are: prompt length - 1 + step).
Read by io.zse.model.LlamaModelGoldenTest. Greedy decoding runs with the KV cache, as a server would.
"""
import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

from hf_greedy import greedy, top_entries

PROMPTS = ["Once upon a time", "Once upon a time, ", "The little dog", "Tom and Sue went to the park. They"]
NEW_TOKENS = 64
LOGIT_STEPS = 8


def main(model_dir, out_path):
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    cases = []
    for prompt in PROMPTS:
        prompt_ids = tokenizer(prompt)["input_ids"]
        ids, logits = greedy(model, prompt_ids, NEW_TOKENS)
        cases.append({
            "prompt": prompt,
            "prompt_ids": prompt_ids,
            "greedy_ids": ids,
            "greedy_text": tokenizer.decode(ids),
            "logits": [top_entries(logits[s], len(prompt_ids) - 1 + s) for s in range(LOGIT_STEPS)],
        })
    doc = {
        "model": Path(model_dir).name,
        "generator": f"transformers {transformers.__version__} torch {torch.__version__}",
        "cases": cases,
    }
    Path(out_path).write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
