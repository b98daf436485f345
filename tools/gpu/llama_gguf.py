#!/usr/bin/env python3
"""Writes an F16 GGUF (v3) of a Llama-architecture Hugging Face checkpoint, for llama.cpp beside us on the GPU machine.

The GPU machine has PyTorch but maybe not transformers, sentencepiece or PyYAML, which llama.cpp's convert_hf_to_gguf.py
and its gguf-py need; this needs numpy only. It writes what convert_hf_to_gguf.py writes for such a checkpoint with a
Llama 3 (GPT-2 style BPE) tokenizer: the same keys and values (but general.size_label, and general.name = the folder's),
every tensor in F16 (1-D ones in F32), q and k rows permuted to llama.cpp's RoPE order, rope_freqs for llama3 RoPE
scaling. tools/gpu/peer.sh uses it only when that
script cannot run; bench/README.md ("On a GPU") records the check that both give the same tensors.

Usage: llama_gguf.py HF_DIR OUT.gguf
"""
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

ALIGNMENT = 32
F32, F16 = 0, 1  # ggml tensor types
UINT32, INT32, FLOAT32, STRING, ARRAY = 4, 5, 6, 8, 9  # GGUF value types
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4  # token types


def safetensors(folder):
    """name -> (dtype, shape, file, offset, length) of every tensor in the checkpoint."""
    tensors = {}
    for file in sorted(folder.glob("*.safetensors")):
        with open(file, "rb") as f:
            header_length = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(header_length))
        for name, t in header.items():
            if name != "__metadata__":
                begin, end = t["data_offsets"]
                tensors[name] = (t["dtype"], t["shape"], file, 8 + header_length + begin, end - begin)
    return tensors


def load(entry):
    """The tensor as float32."""
    dtype, shape, file, offset, length = entry
    raw = np.fromfile(file, dtype=np.uint8, count=length, offset=offset)
    if dtype == "BF16":
        values = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    elif dtype == "F16":
        values = raw.view(np.float16).astype(np.float32)
    elif dtype == "F32":
        values = raw.view(np.float32)
    else:
        raise SystemExit(f"unsupported dtype {dtype}")
    return values.reshape(shape)


def rope_order(w, heads):
    """Rows of each head from rotate-half order (transformers) to interleaved pairs (llama.cpp)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(config):
    """rope_freqs: per frequency, the divisor llama3 RoPE scaling applies (1 for high, factor for low frequencies)."""
    s = config.get("rope_scaling") or {}
    if s.get("rope_type", s.get("type")) != "llama3":
        return None
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    base = config.get("rope_theta", 10000.0)
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor, low, high = s["factor"], s.get("low_freq_factor", 1.0), s.get("high_freq_factor", 4.0)
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    factors = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            factors.append(1)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def vocabulary(folder, vocab_size):
    """tokens, token types and merges of a tokenizer.json BPE, by id; gaps become [PAD<id>] tokens."""
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    model = tok["model"]
    if model["type"] != "BPE":
        raise SystemExit("only BPE tokenizers (Llama 3) are written")
    by_id = {i: t for t, i in model["vocab"].items()}
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    tokens, types = [], []
    for i in range(vocab_size):
        if i in added:
            a = added[i]
            tokens.append(a["content"])
            types.append(CONTROL if a.get("special") else USER_DEFINED)
        elif i in by_id:
            tokens.append(by_id[i])
            types.append(NORMAL)
        else:
            tokens.append(f"[PAD{i}]")
            types.append(USER_DEFINED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return tokens, types, merges


class Writer:
    def __init__(self):
        self.kv = bytearray()
        self.count = 0

    @staticmethod
    def string(s):
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def add(self, key, kind, value):
        self.kv += self.string(key) + struct.pack("<I", kind)
        if kind == STRING:
            self.kv += self.string(value)
        elif kind == UINT32:
            self.kv += struct.pack("<I", value)
        elif kind == FLOAT32:
            self.kv += struct.pack("<f", value)
        else:
            raise ValueError(kind)
        self.count += 1

    def add_array(self, key, kind, values):
        self.kv += self.string(key) + struct.pack("<II", ARRAY, kind) + struct.pack("<Q", len(values))
        if kind == STRING:
            self.kv += b"".join(self.string(v) for v in values)
        elif kind == INT32:
            self.kv += np.asarray(values, dtype="<i4").tobytes()
        self.count += 1


def main(folder, out):
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    if config.get("model_type") not in ("llama", "mistral"):
        raise SystemExit(f"model_type {config.get('model_type')}: only Llama checkpoints are written")
    heads, kv_heads = config["num_attention_heads"], config.get("num_key_value_heads", config["num_attention_heads"])
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    vocab_size = config["vocab_size"]
    w = Writer()
    w.add("general.architecture", STRING, "llama")
    w.add("general.type", STRING, "model")
    w.add("general.name", STRING, folder.name)
    w.add("llama.block_count", UINT32, config["num_hidden_layers"])
    w.add("llama.context_length", UINT32, config["max_position_embeddings"])
    w.add("llama.embedding_length", UINT32, config["hidden_size"])
    w.add("llama.feed_forward_length", UINT32, config["intermediate_size"])
    w.add("llama.attention.head_count", UINT32, heads)
    w.add("llama.attention.head_count_kv", UINT32, kv_heads)
    w.add("llama.rope.freq_base", FLOAT32, config.get("rope_theta", 10000.0))
    w.add("llama.attention.layer_norm_rms_epsilon", FLOAT32, config["rms_norm_eps"])
    w.add("llama.attention.key_length", UINT32, head_dim)
    w.add("llama.attention.value_length", UINT32, head_dim)
    w.add("general.file_type", UINT32, 1)  # mostly F16
    w.add("llama.vocab_size", UINT32, vocab_size)
    w.add("llama.rope.dimension_count", UINT32, head_dim)
    tokens, types, merges = vocabulary(folder, vocab_size)
    w.add("tokenizer.ggml.model", STRING, "gpt2")
    w.add("tokenizer.ggml.pre", STRING, "llama-bpe")
    w.add_array("tokenizer.ggml.tokens", STRING, tokens)
    w.add_array("tokenizer.ggml.token_type", INT32, types)
    w.add_array("tokenizer.ggml.merges", STRING, merges)
    path = folder / "tokenizer_config.json"
    tokenizer_config = json.loads(path.read_text()) if path.exists() else {}
    for key in ("bos", "eos"):  # tokenizer_config.json's token by its text first, as llama.cpp's SpecialVocab
        named = tokenizer_config.get(f"{key}_token")
        named = named.get("content") if isinstance(named, dict) else named
        token_id = tokens.index(named) if named in tokens else config.get(f"{key}_token_id")
        if isinstance(token_id, int):
            w.add(f"tokenizer.ggml.{key}_token_id", UINT32, token_id)
    if tokenizer_config.get("chat_template"):
        w.add("tokenizer.chat_template", STRING, tokenizer_config["chat_template"])
    w.add("general.quantization_version", UINT32, 2)

    source = safetensors(folder)
    plan = []  # (gguf name, shape, array maker), in the file's order
    factors = llama3_rope_factors(config)
    if factors is not None:
        plan.append(("rope_freqs.weight", [len(factors)], lambda: factors))
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    parts = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "mlp.down_proj": "ffn_down",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "self_attn.k_proj": "attn_k",
             "self_attn.o_proj": "attn_output", "self_attn.q_proj": "attn_q", "self_attn.v_proj": "attn_v"}
    for hf in sorted(source):
        if hf in names:
            name = names[hf]
        else:
            pieces = hf.split(".")  # model.layers.N.<part>.weight
            name = f"blk.{pieces[2]}.{parts['.'.join(pieces[3:-1])]}.weight"
        rope_heads = heads if hf.endswith("q_proj.weight") else kv_heads if hf.endswith("k_proj.weight") else None
        if rope_heads:
            plan.append((name, source[hf][1], lambda hf=hf, h=rope_heads: rope_order(load(source[hf]), h)))
        else:
            plan.append((name, source[hf][1], lambda hf=hf: load(source[hf])))

    infos, offset, layout = bytearray(), 0, []
    for name, shape, make in plan:
        kind = F32 if len(shape) == 1 else F16
        length = math.prod(shape) * (4 if kind == F32 else 2)
        infos += Writer.string(name) + struct.pack("<I", len(shape))
        infos += b"".join(struct.pack("<Q", d) for d in reversed(shape)) + struct.pack("<IQ", kind, offset)
        layout.append((make, kind, length))
        offset += (length + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    with open(out, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(plan), w.count) + w.kv + infos)
        f.write(b"\0" * (-f.tell() % ALIGNMENT))
        for make, kind, length in layout:
            data = make().astype(np.float32 if kind == F32 else np.float16).tobytes()
            assert len(data) == length
            f.write(data + b"\0" * (-length % ALIGNMENT))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
