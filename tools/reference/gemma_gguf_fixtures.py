#!/usr/bin/env python3
"""A tiny Gemma 2 GGUF written by llama.cpp's own convert_hf_to_gguf.py, for the GGUF import test.

Usage: python gemma_gguf_fixtures.py <llama.cpp-dir> <output-dir>
  e.g. /work/peer/venv/bin/python tools/reference/gemma_gguf_fixtures.py /work/peer/llama.cpp src/test/resources/gguf

The checkpoint has the formula weights of tiny_models.py (io.zse.model.FormulaCheckpoint rebuilds it at test time, so
the test converts the same weights from safetensors and from this GGUF and compares) and the TinyStories tokenizer
already in the repository (vocabulary 2048, keeping the file small). Writes tiny-gemma2-f32.gguf.gz and
tiny-gemma2-f32.json (the config, seed and tokenizer the test rebuilds the checkpoint from).

Two things differ from a plain `convert_hf_to_gguf.py <dir> --outtype f32` run, both outside the weights and the
hyperparameters under test:
  - llama.cpp's Gemma2Model reads only a SentencePiece tokenizer.model (and marks it add_space_prefix false, as
    Gemma's tokenizer is); this tokenizer is a tokenizer.json that does add the prefix, so its vocabulary is written
    the way the converter's LlamaModel writes a tokenizer.json-only checkpoint (_set_vocab_llama_hf);
  - GGUF keeps no query_pre_attn_scalar (llama.cpp uses head_dim), so this checkpoint's scalar is its head_dim.
This llama.cpp checkout (c392e50, February 2025) predates Gemma 3 in the converter, so there is no gemma3 fixture.
"""
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from tiny_models import COMMON, build

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
TINYSTORIES = Path(__file__).resolve().parents[2] / "src/test/resources/models/tinystories-656k"
SEED = 11
CONFIG = {
    **{k: v for k, v in COMMON.items() if k != "hidden_act"},
    "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_activation": "gelu_pytorch_tanh",
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "vocab_size": 2048, "max_position_embeddings": 512, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
    "query_pre_attn_scalar": 16, "sliding_window": 8, "attn_logit_softcapping": 3.0, "final_logit_softcapping": 4.0,
    "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
}


def main(llama_cpp, out):
    llama_cpp, out = Path(llama_cpp), Path(out)
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(0, str(llama_cpp / "gguf-py"))
    import convert_hf_to_gguf as converter

    converter.Gemma2Model.set_vocab = converter.Model._set_vocab_llama_hf
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "tiny-gemma2"
        model, _ = build(CONFIG, SEED)
        model.save_pretrained(model_dir, safe_serialization=True)
        for name in TOKENIZER_FILES:
            shutil.copy(TINYSTORIES / name, model_dir / name)
        gguf = Path(tmp) / "tiny-gemma2-f32.gguf"
        sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", "f32", "--outfile", str(gguf)]
        converter.main()
        (out / "tiny-gemma2-f32.gguf.gz").write_bytes(gzip.compress(gguf.read_bytes(), 9, mtime=0))
    doc = {"gguf": "tiny-gemma2-f32.gguf",
           "writer": "llama.cpp c392e50 convert_hf_to_gguf.py --outtype f32 (vocabulary through _set_vocab_llama_hf)",
           "tokenizer": "src/test/resources/models/tinystories-656k", "config": CONFIG,
           "weights": {"seed": SEED, "formula": "tools/reference/tiny_models.py"}}
    (out / "tiny-gemma2-f32.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(*sys.argv[1:])
