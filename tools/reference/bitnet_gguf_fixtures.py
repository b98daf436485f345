#!/usr/bin/env python3
"""Tiny BitNet b1.58 GGUF files with ternary tensor types (TQ2_0, TQ1_0), written with llama.cpp's gguf-py, for the
GGUF import test.

Usage: python bitnet_gguf_fixtures.py <llama.cpp-dir> <output-dir>
  e.g. /work/peer/venv/bin/python tools/reference/bitnet_gguf_fixtures.py /work/peer/llama.cpp src/test/resources/gguf

The model is tiny_bitnet.py's bitnet-packed (transformers' BitNetForCausalLM: relu² feed-forward, attn_sub_norm and
ffn_sub_norm, tied embeddings) with its formula codes and weights, but with the TinyStories tokenizer already in the
repository (vocabulary 2048 instead of Llama 3.1's 128256, keeping the file small), and hidden size 256, heads of
64 and feed-forward 512, since TQ blocks hold 256 elements of a row. io.zse.model.FormulaCheckpoint
rebuilds the packed safetensors checkpoint at test time, so the test converts the same model from both and compares.

Why gguf-py and not convert_hf_to_gguf.py + llama-quantize: this llama.cpp (c392e50) converts only the community
`BitnetForCausalLM` (1bitLLM, architecture `bitnet`, whose graph gates the feed-forward with SiLU), not transformers'
`BitNetForCausalLM` (relu²), which bitnet.cpp writes as architecture `bitnet-b1.58`; llama-quantize refuses an
architecture it does not know. So the file is written as that converter would write the model (same keys, tensor
names, vocabulary through _set_vocab_llama_hf) under `bitnet-b1.58`, and the projections are quantized by gguf-py's
own TQ quantizers (gguf.quants.quantize, the numpy twins of ggml's quantize_row_tq*_0_ref):

  tiny-bitnet-tq2_0.gguf  projections TQ2_0 quantized from t * s (s = 1 / weight_scale, float32), as llama-quantize
                          would quantize llama.cpp's converted ternary floats: every block's d is float16(s);
  tiny-bitnet-tq1_0.gguf  projections TQ1_0 quantized from t alone (every d is 1) plus llama.cpp's optional per-tensor
                          scale tensors blk.N.<proj>.scale (F32 [1]) holding s exactly: the lossless form.

Everything else is F32. Writes each file gzip-compressed with a JSON description (config, seed).
"""
import gzip
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from tiny_bitnet import BASE, MODELS, packed_codes
from tiny_models import formula_tensor

TINYSTORIES = Path(__file__).resolve().parents[2] / "src/test/resources/models/tinystories-656k"
SPEC = next(spec for spec in MODELS if spec["name"] == "bitnet-packed")
# rows of 256 (TQ blocks are 256 elements): hidden 256, 4 heads / 2 kv heads of 64
CONFIG = {**BASE, "quantization_config": SPEC["quantization_config"], "vocab_size": 2048, "bos_token_id": 1,
          "eos_token_id": 2, "pad_token_id": 0, "hidden_size": 256, "intermediate_size": 512, "head_dim": 64}
ARCH = "bitnet-b1.58"
GGUF_NAMES = {
    "input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.attn_sub_norm": "attn_sub_norm",
    "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down", "mlp.ffn_sub_norm": "ffn_sub_norm",
}


def hf_tensors():
    """(Hugging Face name, shape) of every tensor of the model, as transformers' BitNetForCausalLM holds them."""
    c = CONFIG
    d, ff, hd = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    yield "model.embed_tokens.weight", (c["vocab_size"], d)
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        yield p + "input_layernorm.weight", (d,)
        yield p + "self_attn.q_proj.weight", (q, d)
        yield p + "self_attn.k_proj.weight", (kv, d)
        yield p + "self_attn.v_proj.weight", (kv, d)
        yield p + "self_attn.o_proj.weight", (d, q)
        yield p + "self_attn.attn_sub_norm.weight", (q,)
        yield p + "post_attention_layernorm.weight", (d,)
        yield p + "mlp.gate_proj.weight", (ff, d)
        yield p + "mlp.up_proj.weight", (ff, d)
        yield p + "mlp.down_proj.weight", (d, ff)
        yield p + "mlp.ffn_sub_norm.weight", (ff,)
    yield "model.norm.weight", (d,)


def gguf_name(hf):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    parts = hf.split(".")
    return f"blk.{parts[2]}.{GGUF_NAMES['.'.join(parts[3:-1])]}.weight"


def write(gguf, quants, model_dir, path, qtype, with_scale_tensors):
    c = CONFIG
    w = gguf.GGUFWriter(str(path), ARCH)
    w.add_name("tiny-bitnet")
    w.add_block_count(c["num_hidden_layers"])
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(c["num_attention_heads"])
    w.add_head_count_kv(c["num_key_value_heads"])
    w.add_key_length(c["head_dim"])
    w.add_value_length(c["head_dim"])
    w.add_rope_freq_base(c["rope_theta"])
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_vocab_size(c["vocab_size"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_TQ2_0 if qtype == gguf.GGMLQuantizationType.TQ2_0
                    else gguf.LlamaFileType.MOSTLY_TQ1_0)
    # the vocabulary as convert_hf_to_gguf.py's _set_vocab_llama_hf writes it
    vocab = gguf.LlamaHfVocab(model_dir)
    tokens, scores, types = zip(*vocab.all_tokens())
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(list(tokens))
    w.add_token_scores(list(scores))
    w.add_token_types(list(types))
    gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(w)
    seed = SPEC["seed"]
    for hf, shape in hf_tensors():
        name = gguf_name(hf)
        if hf.split(".")[-2] in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
            t = (packed_codes(hf, shape, seed) - 1).astype(np.float32)
            s = np.float32(1.0 / float(np.float32(math.sqrt(2.0 * shape[1] / 3.0))))
            values = t if with_scale_tensors else t * s
            w.add_tensor(name, quants.quantize(values, qtype), raw_dtype=qtype)
            if with_scale_tensors:
                w.add_tensor(name.replace(".weight", ".scale"), np.array([s], dtype=np.float32))
        else:
            w.add_tensor(name, formula_tensor(hf, shape, seed).numpy().astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(llama_cpp, out):
    out = Path(out)
    sys.path.insert(0, str(Path(llama_cpp) / "gguf-py"))
    import gguf
    from gguf import quants
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "tiny-bitnet"
        model_dir.mkdir()
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            shutil.copy(TINYSTORIES / name, model_dir / name)
        (model_dir / "config.json").write_text(json.dumps(CONFIG, indent=1))
        for qtype, stem, scales in ((gguf.GGMLQuantizationType.TQ2_0, "tiny-bitnet-tq2_0", False),
                                    (gguf.GGMLQuantizationType.TQ1_0, "tiny-bitnet-tq1_0", True)):
            path = Path(tmp) / f"{stem}.gguf"
            write(gguf, quants, model_dir, path, qtype, scales)
            (out / f"{stem}.gguf.gz").write_bytes(gzip.compress(path.read_bytes(), 9, mtime=0))
            doc = {"gguf": f"{stem}.gguf",
                   "writer": f"gguf-py (llama.cpp c392e50) GGUFWriter, projections {qtype.name} by gguf.quants"
                             + (" from t with F32 .scale tensors" if scales else " from t * s"),
                   "tokenizer": "src/test/resources/models/tinystories-656k", "config": CONFIG,
                   "weights": {"seed": SPEC["seed"], "formula": "tools/reference/tiny_bitnet.py (bitnet-packed)"}}
            (out / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
