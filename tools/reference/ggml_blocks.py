#!/usr/bin/env python3
"""Raw ggml blocks of every type the GGUF importer decodes, with the values the gguf package dequantizes them to.

Usage: python ggml_blocks.py <llama.cpp-dir> <llama-quantize> <output-json>
  e.g. /work/peer/venv/bin/python tools/reference/ggml_blocks.py /work/peer/llama.cpp \
           /work/peer/build/bin/llama-quantize src/test/resources/golden/ggml-blocks.json

A 1-layer random Llama with rows of 256 (seed 5) is converted to an F32 GGUF by convert_hf_to_gguf.py and quantized
by llama-quantize --pure to each type; for each, the first 512 elements of blk.0.ffn_up.weight: their bytes (hex) and
gguf.quants.dequantize's float32 values; and "source", the F32 values llama-quantize was given. Read by
GgmlBlockDecoderTest and Q6KQuantizerTest (our quantizer writes llama-quantize's bytes).
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from gguf import GGUFReader
from gguf.quants import dequantize
from transformers import LlamaConfig, LlamaForCausalLM

TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "BF16", "F16", "TQ1_0", "TQ2_0"]
ELEMENTS = 512
TENSOR = "blk.0.ffn_up.weight"


def main(llama_cpp, quantize, out):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        torch.manual_seed(5)
        config = LlamaConfig(hidden_size=256, intermediate_size=256, num_hidden_layers=1, num_attention_heads=4,
                             num_key_value_heads=2, vocab_size=2048, initializer_range=0.3, tie_word_embeddings=True)
        LlamaForCausalLM(config).save_pretrained(tmp / "model")
        for name in ["tokenizer.json", "tokenizer_config.json"]:
            (tmp / "model" / name).write_bytes((Path(__file__).parents[2] / "src/test/resources/models/tinystories-656k"
                                                / name).read_bytes())
        subprocess.run([sys.executable, str(Path(llama_cpp) / "convert_hf_to_gguf.py"), str(tmp / "model"),
                        "--outtype", "f32", "--outfile", str(tmp / "f32.gguf")], check=True, capture_output=True)
        source = next(t for t in GGUFReader(tmp / "f32.gguf").tensors if t.name == TENSOR)
        source = np.asarray(source.data).reshape(-1)[:ELEMENTS].astype(np.float32)
        cases = []
        for kind in TYPES:
            path = tmp / f"{kind}.gguf"
            subprocess.run([quantize, "--pure", str(tmp / "f32.gguf"), str(path), kind], check=True, capture_output=True)
            tensor = next(t for t in GGUFReader(path).tensors if t.name == TENSOR)
            assert tensor.tensor_type.name == kind, (kind, tensor.tensor_type.name)
            raw = np.asarray(tensor.data).reshape(-1).view(np.uint8)
            values = dequantize(np.asarray(tensor.data), tensor.tensor_type).reshape(-1)[:ELEMENTS].astype(np.float32)
            block_bytes = raw.size * ELEMENTS // int(np.prod(tensor.shape))
            cases.append({"type": kind, "bytes": raw[:block_bytes].tobytes().hex(),
                          "values": [float(v) for v in values]})
    Path(out).write_text(json.dumps({"tensor": TENSOR, "elements": ELEMENTS, "source": [float(v) for v in source],
                                     "cases": cases}) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
