#!/usr/bin/env python3
"""Tiny Qwen3 and Gemma 3 GGUFs written with gguf-py's GGUFWriter, for the GGUF import test.

Usage: python gguf_writer_fixtures.py <output-dir>
  e.g. /work/peer/venv/bin/python tools/reference/gguf_writer_fixtures.py src/test/resources/gguf

llama.cpp c392e50 (the checkout beside us) has no converter for Qwen3 or Gemma 3, so these files are written here the
way llama.cpp's later convert_hf_to_gguf.py writes them (tensor names and keys from gguf-py's constants, which the
installed gguf package knows as MODEL_ARCH.QWEN3 and MODEL_ARCH.GEMMA3):
  - tensors: token_embd, output_norm, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, attn_q_norm, attn_k_norm,
    ffn_norm, ffn_gate, ffn_up, ffn_down}, and for Gemma 3 also post_attention_norm and post_ffw_norm (its ffn_norm is
    the pre-feed-forward norm); tied embeddings, so no output.weight; no Q/K row permutation (both use NeoX RoPE);
  - Gemma 3's norm weights (q/k norms included) stored as 1 + w, as llama.cpp's Gemma3Model does;
  - keys <arch>.context_length, embedding_length, block_count, feed_forward_length, attention.head_count,
    head_count_kv, key_length, value_length, layer_norm_rms_epsilon, rope.freq_base, and for Gemma 3
    attention.sliding_window, attention.sliding_window_pattern (one flag per layer), rope.freq_base_swa and
    rope.scaling.type/factor (linear 4);
  - the vocabulary: the tokenizer.ggml.* keys of tiny-gemma2-f32.gguf (llama.cpp's own converter's rendering of the
    TinyStories tokenizer, vocabulary 2048), copied unchanged, keeping the files small.
The weights are the formula weights of tiny_models.py (the qwen3-qk-norm and gemma3-local-global shapes with the
vocabulary cut to 2048 and the TinyStories special ids; io.zse.model.FormulaCheckpoint rebuilds them at test time), so
the test converts the same weights from safetensors and from these F32 GGUFs and compares tensor for tensor.
transformers 5.18 cannot serve as the reference here: from_pretrained(gguf_file=...) loads both files but reads
neither qwen3.attention.key_length (it keeps Qwen3Config's head_dim 128, and the forward pass fails on the q_norm of
32) nor Gemma 3's sliding_window_pattern or linear scaling (every layer local; different greedy ids), so the golden is
the safetensors checkpoint of the same formula weights (F32 GGUF holds the same floats).
"""
import gzip
import json
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
import torch

from tiny_models import COMMON, MODELS, build

SEED_OF = {spec["name"]: spec["seed"] for spec in MODELS}
CONFIG_OF = {spec["name"]: spec["config"] for spec in MODELS}
VOCAB = {"vocab_size": 2048, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
FIXTURES = {
    "tiny-qwen3-f32": ("qwen3-qk-norm", "qwen3"),
    "tiny-gemma3-f32": ("gemma3-local-global", "gemma3"),
}
LAYER = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
         "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm",
         "self_attn.k_norm": "attn_k_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
         "mlp.down_proj": "ffn_down"}
QWEN3_LAYER = {**LAYER, "post_attention_layernorm": "ffn_norm"}
GEMMA3_LAYER = {**LAYER, "post_attention_layernorm": "post_attention_norm",
                "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm"}


def gguf_name(hf, arch):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    parts = hf.split(".")
    assert parts[:2] == ["model", "layers"], hf
    part, suffix = ".".join(parts[3:-1]), parts[-1]
    table = GEMMA3_LAYER if arch == "gemma3" else QWEN3_LAYER
    return f"blk.{parts[2]}.{table[part]}.{suffix}"


def fields(reader):
    """Every key/value of a GGUFReader but its own GGUF.* entries and the architecture (the writer's own), as
    (key, value, type, sub-type) for GGUFWriter.add_key_value."""
    for key, field in reader.fields.items():
        if not key.startswith("GGUF.") and key != "general.architecture":
            value_type = field.types[0]
            sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
            yield key, field.contents(), value_type, sub_type


def tokenizer_fields(source):
    return [f for f in fields(gguf.GGUFReader(source)) if f[0].startswith("tokenizer.")]


def write(out, name, tokenizer_source):
    spec_name, arch = FIXTURES[name]
    config = {**COMMON, **CONFIG_OF[spec_name], **VOCAB}
    if arch == "gemma3":
        config.pop("hidden_act")
    seed = SEED_OF[spec_name]
    model, _ = build(config, seed)
    c = model.config
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / (name + ".gguf")
        w = gguf.GGUFWriter(path, arch)
        w.add_name(name)
        w.add_file_type(gguf.LlamaFileType.ALL_F32)
        w.add_context_length(c.max_position_embeddings)
        w.add_embedding_length(c.hidden_size)
        w.add_block_count(c.num_hidden_layers)
        w.add_feed_forward_length(c.intermediate_size)
        w.add_head_count(c.num_attention_heads)
        w.add_head_count_kv(c.num_key_value_heads)
        w.add_key_length(c.head_dim)
        w.add_value_length(c.head_dim)
        w.add_layer_norm_rms_eps(c.rms_norm_eps)
        if arch == "gemma3":
            w.add_rope_freq_base(config["rope_theta"])
            w.add_sliding_window(c.sliding_window)
            w.add_sliding_window_pattern([t == "sliding_attention" for t in c.layer_types])
            w.add_float32(f"{arch}.rope.freq_base_swa", config["rope_local_base_freq"])
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(config["rope_scaling"]["factor"])
        else:
            w.add_rope_freq_base(config["rope_theta"])
        for key, value, value_type, sub_type in tokenizer_fields(tokenizer_source):
            w.add_key_value(key, value, value_type, sub_type)
        for hf, tensor in model.state_dict().items():
            if hf == "lm_head.weight":
                continue  # tied
            data = tensor.to(torch.float32)
            if arch == "gemma3" and hf.endswith("norm.weight"):
                data = data + 1  # llama.cpp stores Gemma's (1 + w)
            w.add_tensor(gguf_name(hf, arch), data.numpy().astype(np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        (out / (name + ".gguf.gz")).write_bytes(gzip.compress(path.read_bytes(), 9, mtime=0))
    doc = {"gguf": name + ".gguf",
           "writer": f"tools/reference/gguf_writer_fixtures.py (gguf-py GGUFWriter, arch {arch}, F32)",
           "tokenizer": "src/test/resources/models/tinystories-656k", "config": config,
           "weights": {"seed": seed, "formula": "tools/reference/tiny_models.py"}}
    (out / (name + ".json")).write_text(json.dumps(doc, indent=1) + "\n")


def main(out):
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "tiny-gemma2-f32.gguf"
        source.write_bytes(gzip.decompress((out / "tiny-gemma2-f32.gguf.gz").read_bytes()))
        for name in FIXTURES:
            write(out, name, source)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(sys.argv[1])
