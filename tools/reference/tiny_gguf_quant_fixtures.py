#!/usr/bin/env python3
"""The llama-untied tiny checkpoint as llama.cpp's own tools write it at F16, Q8_0, Q4_0 and Q4_K_M, with goldens.

Usage: python tiny_gguf_quant_fixtures.py <llama.cpp-dir> <llama-quantize> <output-dir>
  e.g. PYTHONPATH=<dir with accelerate, psutil> /work/peer/venv/bin/python tools/reference/tiny_gguf_quant_fixtures.py \
           /work/peer/llama.cpp /work/peer/build/bin/llama-quantize src/test/resources/gguf

The checkpoint is tiny_models.py's llama-untied config (formula weights, seed of that model) with the TinyStories
tokenizer and vocabulary 2048 (small files). convert_hf_to_gguf.py --outtype f16 writes the F16 file; --outtype f32
and then llama-quantize Q8_0 / Q4_0 / Q4_K_M the others. Rows are 64 long, so llama-quantize cannot use K-quant
blocks of 256 and falls back (its own choice, recorded by the import's notes) for Q4_K_M. Each file's golden is
gguf_fixtures.golden: transformers loading that GGUF (gguf_file=, dequantized to float32), greedy ids and top-5 logits.
"""
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from gguf_fixtures import golden
from tiny_models import COMMON, MODELS, build

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
TINYSTORIES = Path(__file__).resolve().parents[2] / "src/test/resources/models/tinystories-656k"
SPEC = next(spec for spec in MODELS if spec["name"] == "llama-untied")
CONFIG = {**COMMON, **SPEC["config"], "vocab_size": 2048, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
NAME = "tiny-llama-untied"


def run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL)


def main(llama_cpp, quantize, out):
    llama_cpp, out = Path(llama_cpp), Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir = tmp / NAME
        model, _ = build(CONFIG, SPEC["seed"])
        model.save_pretrained(model_dir, safe_serialization=True)
        for name in TOKENIZER_FILES:
            shutil.copy(TINYSTORIES / name, model_dir / name)
        convert = llama_cpp / "convert_hf_to_gguf.py"
        for outtype in ["f32", "f16"]:
            run(sys.executable, convert, model_dir, "--outtype", outtype, "--outfile", tmp / f"{NAME}-{outtype}.gguf")
        made = [f"{NAME}-f16.gguf"]
        for kind in ["q8_0", "q4_0", "q4_k_m"]:
            made.append(f"{NAME}-{kind}.gguf")
            run(quantize, tmp / f"{NAME}-f32.gguf", tmp / made[-1], kind.upper())
        for name in made:
            doc = golden(tmp, name, model_dir)
            doc["weights"] = {"config": CONFIG, "seed": SPEC["seed"], "formula": "tools/reference/tiny_models.py"}
            (out / name.replace(".gguf", ".json")).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            (out / (name + ".gz")).write_bytes(gzip.compress((tmp / name).read_bytes(), 9, mtime=0))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(*sys.argv[1:])
