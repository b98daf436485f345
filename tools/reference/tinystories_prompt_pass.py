#!/usr/bin/env python3
"""Golden prompt passes of the real TinyStories-656K checkpoint, by Hugging Face transformers in float32: what
/v1/embeddings and completions' echo + logprobs compute.

Usage: python tinystories_prompt_pass.py <model-dir> <output-json>
  e.g. /work/peer/venv/bin/python tools/reference/tinystories_prompt_pass.py ../shared/models/tinystories-656k \
           src/test/resources/golden/tinystories-656k-prompt-pass-f32.json

For each text: its ids (the tokenizer's post-processor puts <|start_story|> first); the final hidden states (after
the final norm: LlamaModel's last_hidden_state) pooled by mean and by last token, each scaled to unit length; and the
log-softmax of each prompt token given the ones before it, with the top-2 alternatives there.
Read by io.zse.serve.PromptPassTest.
"""
import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

TEXTS = ["Once upon a time", "The little dog ran to the park and played with a red ball."]
TOP = 2


def main(model_dir, out_path):
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    cases = []
    for text in TEXTS:
        ids = tokenizer(text)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_hidden_states=True)
        hidden = out.hidden_states[-1][0]  # transformers applies the final norm to the last entry
        mean = torch.nn.functional.normalize(hidden.mean(dim=0), dim=0)
        last = torch.nn.functional.normalize(hidden[-1], dim=0)
        logprobs = torch.log_softmax(out.logits[0].double(), dim=-1)
        scored = []
        for i in range(1, len(ids)):
            row = logprobs[i - 1]
            top = torch.topk(row, TOP)
            scored.append({"token": ids[i], "logprob": row[ids[i]].item(),
                           "top": [[int(t), v.item()] for v, t in zip(top.values, top.indices)]})
        cases.append({"text": text, "ids": ids, "mean": mean.tolist(), "last": last.tolist(), "logprobs": scored})
    doc = {
        "model": Path(model_dir).name,
        "generator": f"transformers {transformers.__version__} torch {torch.__version__}",
        "cases": cases,
    }
    Path(out_path).write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
