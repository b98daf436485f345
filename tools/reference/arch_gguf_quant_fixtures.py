#!/usr/bin/env python3
"""The tiny Gemma 2, Phi-3, Qwen3 and Gemma 3 GGUFs quantized by llama-quantize (F16, Q8_0, Q4_0, Q4_K_M), with goldens.

Usage: python arch_gguf_quant_fixtures.py <llama-quantize> <fixture-dir> [NAME ...]
  e.g. /work/peer/venv/bin/python tools/reference/arch_gguf_quant_fixtures.py \
           /work/peer/build/bin/llama-quantize src/test/resources/gguf

Each starts from the F32 fixture already in <fixture-dir> (tiny-<name>-f32.gguf.gz: gemma_gguf_fixtures.py and
phi3_gguf_fixtures.py through llama.cpp's converter, gguf_writer_fixtures.py for Qwen3 and Gemma 3) and its JSON (the
config and seed of its formula weights). llama-quantize (c392e50) refuses the architectures it predates (qwen3,
gemma3), so those files are quantized under the name of one it knows ("llama", the same keys renamed) and then written
back with their own keys and the quantized tensors unchanged; which tensor gets which type depends on tensor names and
shapes only, not on that name. Rows of 64 leave no room for K-quant blocks of 256, so Q4_K_M falls back to the legacy
types llama-quantize chooses.

The reference is not transformers' GGUF loader (it misreads Qwen3's head size and Gemma 3's layer pattern, keeps
Gemma 2's norms shifted by one, and the Phi-3 logits it gave differed from the checkpoint's by 1.7e-4): each file's
tensors are dequantized with gguf-py and loaded into the model transformers builds from the checkpoint's own config.
Which parameter each GGUF tensor holds is found from the F32 file, whose tensors equal the formula weights exactly
(Gemma's norms as 1 + w, as llama.cpp stores them; subtracting 1 back is exact for weights in [-0.5, 1]). The golden
is then greedy decoding with a KV cache, as gguf_fixtures.py records it.
"""
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from transformers import AutoTokenizer

from gguf_fixtures import golden_of
from gguf_writer_fixtures import fields
from tiny_models import build

TINYSTORIES = Path(__file__).resolve().parents[2] / "src/test/resources/models/tinystories-656k"
DEFAULT_NAMES = ("gemma2", "phi3", "qwen3", "gemma3")
KINDS = ("f16", "q8_0", "q4_0", "q4_k_m")
KNOWN_TO_QUANTIZE = ("gemma2", "phi3")
# Phi-3's LongRoPE factors: configuration, not weights
EXTRA_TENSORS = ("rope_factors_short.weight", "rope_factors_long.weight")


def rewrite(target, arch, keys, tensors):
    """Writes target: the given (key, value, type, sub-type) entries and GGUFReader tensors, data unchanged."""
    w = gguf.GGUFWriter(target, arch)
    for key, value, value_type, sub_type in keys:
        w.add_key_value(key, value, value_type, sub_type)
    for t in tensors:
        # a quantized tensor's data are its rows of bytes, from which the writer derives its shape
        quantized = t.tensor_type not in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16)
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type if quantized else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize(quantize_tool, f32, out, kind):
    reader = gguf.GGUFReader(f32)
    arch = reader.fields["general.architecture"].contents()
    if arch in KNOWN_TO_QUANTIZE:
        subprocess.run([str(quantize_tool), str(f32), str(out), kind.upper()], check=True, stdout=subprocess.DEVNULL)
        return
    disguised, quantized = out.with_suffix(".llama.gguf"), out.with_suffix(".llama-q.gguf")
    renamed = [("llama." + key[len(arch) + 1:] if key.startswith(arch + ".") else key, *rest)
               for key, *rest in fields(reader)]
    rewrite(disguised, "llama", renamed, reader.tensors)
    subprocess.run([str(quantize_tool), str(disguised), str(quantized), kind.upper()], check=True,
                   stdout=subprocess.DEVNULL)
    result = gguf.GGUFReader(quantized)
    keys = [f for f in fields(reader) if f[0] != "general.file_type"]
    keys += [f for f in fields(result) if f[0] == "general.file_type"]
    rewrite(out, arch, keys, result.tensors)


def parameter_names(f32, model, gemma):
    """GGUF tensor name -> the model's parameter name, by equal values (Gemma norms stored as 1 + w)."""
    params = {n: p.detach().numpy() for n, p in model.named_parameters()}
    names = {}
    for t in gguf.GGUFReader(f32).tensors:
        if t.name in EXTRA_TENSORS:
            continue
        values = np.asarray(t.data, dtype=np.float32).reshape(-1)
        match = [n for n, p in params.items() if p.size == values.size and (
            np.array_equal(p.reshape(-1), values)
            or gemma and n.endswith("norm.weight") and np.array_equal((p + np.float32(1)).reshape(-1), values))]
        if len(match) != 1:
            raise RuntimeError(f"{t.name}: matches {match}")
        names[t.name] = match[0]
    unmatched = set(params) - set(names.values())
    if unmatched:
        raise RuntimeError(f"parameters no GGUF tensor holds: {sorted(unmatched)}")
    return names


def dequantized_model(path, config, seed, names, gemma):
    """The checkpoint's architecture holding the GGUF's tensors dequantized to float32."""
    model, _ = build(config, seed)
    params = dict(model.named_parameters())
    for t in gguf.GGUFReader(path).tensors:
        if t.name in EXTRA_TENSORS:
            continue
        name = names[t.name]
        values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        values = values.reshape(tuple(params[name].shape))
        if gemma and name.endswith("norm.weight"):
            values = values - np.float32(1)
        params[name].data.copy_(torch.from_numpy(np.ascontiguousarray(values)))
    return model


def main(quantize_tool, fixtures, *names):
    fixtures = Path(fixtures)
    tokenizer = AutoTokenizer.from_pretrained(TINYSTORIES)
    for short in names or DEFAULT_NAMES:
        stem = "tiny-" + short
        source = json.loads((fixtures / f"{stem}-f32.json").read_text())
        config, seed = source["config"], source["weights"]["seed"]
        gemma = config["model_type"].startswith("gemma")
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            f32 = tmp / f"{stem}-f32.gguf"
            f32.write_bytes(gzip.decompress((fixtures / f"{stem}-f32.gguf.gz").read_bytes()))
            model, _ = build(config, seed)
            tensor_names = parameter_names(f32, model, gemma)
            for kind in KINDS:
                name = f"{stem}-{kind}.gguf"
                quantize(quantize_tool, f32, tmp / name, kind)
                reference = (f"the GGUF's tensors dequantized by gguf-py {gguf.__name__} and run in the checkpoint's "
                             f"architecture (transformers {transformers.__version__}, float32, torch "
                             f"{torch.__version__}); llama-quantize {kind.upper()} of {stem}-f32.gguf")
                doc = golden_of(dequantized_model(tmp / name, config, seed, tensor_names, gemma), name, tokenizer,
                                reference)
                doc["weights"] = {"config": config, "seed": seed, "formula": "tools/reference/tiny_models.py"}
                (fixtures / f"{stem}-{kind}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
                (fixtures / f"{name}.gz").write_bytes(gzip.compress((tmp / name).read_bytes(), 9, mtime=0))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(*sys.argv[1:])
