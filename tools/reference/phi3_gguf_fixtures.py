#!/usr/bin/env python3
"""A tiny Phi-3 (LongRoPE) GGUF written by llama.cpp's own convert_hf_to_gguf.py, for the GGUF import test.

Usage: python phi3_gguf_fixtures.py <llama.cpp-dir> <output-dir>
  e.g. /work/peer/venv/bin/python tools/reference/phi3_gguf_fixtures.py /work/peer/llama.cpp src/test/resources/gguf

The checkpoint is tiny_models.py's phi3-longrope (fused qkv_proj and gate_up_proj, LongRoPE with original context 16
of 512, so attention factor 1.5) with its formula weights, but with the TinyStories tokenizer already in the repository
(vocabulary 2048 instead of Mistral's 32000, keeping the file small). io.zse.model.FormulaCheckpoint rebuilds it at
test time, so the test converts the same weights from safetensors and from this GGUF and compares. Writes
tiny-phi3-f32.gguf.gz and tiny-phi3-f32.json.

Two things differ from a plain `convert_hf_to_gguf.py <dir> --outtype f32` run, outside the weights and the
hyperparameters under test:
  - llama.cpp's Phi3MiniModel reads only a SentencePiece tokenizer.model, and this tokenizer is a tokenizer.json, so its
    vocabulary is written the way the converter's LlamaModel writes a tokenizer.json-only checkpoint
    (_set_vocab_llama_hf);
  - transformers 5 saves rope_theta and rope_scaling inside rope_parameters, which this llama.cpp (February 2025) does
    not read, so config.json is the config as published Phi-3 checkpoints write it (the dict below, keys at top level).
"""
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from tiny_models import MODELS, build, hf_config

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
TINYSTORIES = Path(__file__).resolve().parents[2] / "src/test/resources/models/tinystories-656k"
SPEC = next(spec for spec in MODELS if spec["name"] == "phi3-longrope")
SEED = SPEC["seed"]
CONFIG = {**hf_config(SPEC), "vocab_size": 2048}


def main(llama_cpp, out):
    llama_cpp, out = Path(llama_cpp), Path(out)
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(0, str(llama_cpp / "gguf-py"))
    import convert_hf_to_gguf as converter

    converter.Phi3MiniModel.set_vocab = converter.Model._set_vocab_llama_hf
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "tiny-phi3"
        model, _ = build(CONFIG, SEED)
        model.save_pretrained(model_dir, safe_serialization=True)
        (model_dir / "config.json").write_text(json.dumps(CONFIG, indent=1))
        for name in TOKENIZER_FILES:
            shutil.copy(TINYSTORIES / name, model_dir / name)
        gguf = Path(tmp) / "tiny-phi3-f32.gguf"
        sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", "f32", "--outfile", str(gguf)]
        converter.main()
        (out / "tiny-phi3-f32.gguf.gz").write_bytes(gzip.compress(gguf.read_bytes(), 9, mtime=0))
    doc = {"gguf": "tiny-phi3-f32.gguf",
           "writer": "llama.cpp c392e50 convert_hf_to_gguf.py --outtype f32 (vocabulary through _set_vocab_llama_hf)",
           "tokenizer": "src/test/resources/models/tinystories-656k", "config": CONFIG,
           "weights": {"seed": SEED, "formula": "tools/reference/tiny_models.py"}}
    (out / "tiny-phi3-f32.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(*sys.argv[1:])
