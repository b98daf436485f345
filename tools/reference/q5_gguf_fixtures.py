#!/usr/bin/env python3
"""TinyStories-656K GGUF files at Q5_0 and Q5_1, made by llama-quantize, and what transformers computes from them.

Usage: python q5_gguf_fixtures.py <llama-quantize> <output-dir>
  e.g. PYTHONPATH=/work/peer/llama.cpp/gguf-py /work/peer/venv/bin/python tools/reference/q5_gguf_fixtures.py \
           /work/peer/build/bin/llama-quantize src/test/resources/gguf

Quantizes the committed tinystories-656k-f32.gguf (gguf_fixtures.py, llama.cpp's convert_hf_to_gguf.py) with
llama-quantize to Q5_0 and Q5_1 and writes, as gguf_fixtures.py does, each file gzip-compressed and its golden JSON:
greedy ids and top-5 logits of transformers loading that GGUF (from_pretrained(gguf_file=...), dequantized to float32,
the reference the imported .zse is compared with).
"""
import gzip
import json
import sys
import tempfile
from pathlib import Path

from gguf_fixtures import golden, run

ROOT = Path(__file__).resolve().parents[2]


def main(quantize, out):
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        f32 = tmp / "tinystories-656k-f32.gguf"
        f32.write_bytes(gzip.decompress((out / "tinystories-656k-f32.gguf.gz").read_bytes()))
        for kind in ["q5_0", "q5_1"]:
            name = f"tinystories-656k-{kind}.gguf"
            run(quantize, f32, tmp / name, kind.upper())
            doc = golden(tmp, name, ROOT / "src/test/resources/models/tinystories-656k")
            (out / name.replace(".gguf", ".json")).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            (out / (name + ".gz")).write_bytes(gzip.compress((tmp / name).read_bytes(), 9, mtime=0))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
