#!/usr/bin/env python3
"""Tiny random-weight BitNet b1.58 checkpoints (BitNetForCausalLM with transformers' BitNet quantization) and their
golden greedy output, as tiny_models.py makes for the other architectures (same JSON fields and checks).

Usage: TORCHDYNAMO_DISABLE=1 python tiny_bitnet.py <shared-dir> <output-dir> [model name ...]
  e.g. TORCHDYNAMO_DISABLE=1 /work/peer/venv/bin/python tools/reference/tiny_bitnet.py ../shared \\
       src/test/resources/golden/architectures
(TORCHDYNAMO_DISABLE runs transformers' @torch.compile BitNet helpers eagerly: the same arithmetic, no compiler.)

transformers needs accelerate to load a quantized checkpoint with from_pretrained; instead the model is built from
its config, its linear layers replaced with transformers' own BitLinear / AutoBitLinear
(integrations.bitnet.replace_with_bitnet_linear, lm_head kept) and the state dict loaded into them: the forward pass
is transformers' own.

Models:
  bitnet-packed  quantization_config bitlinear (offline; the microsoft/bitnet-b1.58-2B-4T form): each projection is
                 uint8 [out/4, in] packed by transformers' pack_weights, plus weight_scale [1] (the output is divided
                 by it). Its codes follow a formula io.zse.model.FormulaCheckpoint implements identically:
                   c_i = floor(3 u_i) in {0, 1, 2} (t = c - 1), i = flat index in the unpacked [out, in] weight,
                   u_i as in tiny_models.py;  weight_scale = float32(sqrt(2 in / 3)) (so t / weight_scale has
                   variance 1 / in).
                 Every other tensor follows tiny_models.py's formula.
  bitnet-online  quantization_config autobitlinear, online: float weights (tiny_models.py's formula), ternarised by
                 transformers at every forward (absmean per tensor).
Each file's "checks.ablation" removes BitNet's sub-norms (attn_sub_norm, ffn_sub_norm).
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import tokenizers
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.integrations.bitnet import pack_weights, replace_with_bitnet_linear
from transformers.utils.quantization_config import BitNetQuantConfig

from hf_greedy import greedy, top_entries
from tiny_models import (COMMON, MIN_MARGIN, NEW_TOKENS, first_difference, formula_tensor, full_forward_logits,
                         uniforms)

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

BASE = {
    **COMMON,
    "architectures": ["BitNetForCausalLM"], "model_type": "bitnet", "hidden_act": "relu2",
    "hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 32, "vocab_size": 128256, "max_position_embeddings": 512, "rope_theta": 500000.0,
    "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "attention_bias": False,
    "bos_token_id": 128000, "eos_token_id": 128001,
}

MODELS = [
    {
        "name": "bitnet-packed",
        "about": "BitNet b1.58, packed uint8 projections with weight_scale (bitlinear, offline), GQA 4/2, tied "
                 "embeddings, Llama-3.1 tokenizer",
        "tokenizer": "llama3_1",
        "seed": 11,
        "prompt": "The quiet harbour town woke up to the smell of fresh bread and salt.",
        "quantization_config": {"quant_method": "bitnet", "linear_class": "bitlinear",
                                "quantization_mode": "offline"},
    },
    {
        "name": "bitnet-online",
        "about": "BitNet b1.58, float projections ternarised online (autobitlinear), GQA 4/2, tied embeddings, "
                 "Llama-3.1 tokenizer",
        "tokenizer": "llama3_1",
        "seed": 12,
        "prompt": "A lighthouse stood alone on the cliff, its lamp turning slowly through the fog.",
        "quantization_config": {"quant_method": "bitnet", "linear_class": "autobitlinear",
                                "quantization_mode": "online"},
    },
]


def is_projection(name):
    return name.endswith(".weight") and name.split(".")[-2] in PROJECTIONS


def packed_codes(name, shape, seed):
    """Codes c in {0, 1, 2} of the unpacked [out, in] weight."""
    u = uniforms(name, seed, shape[0] * shape[1])
    return np.floor(3.0 * u).astype(np.int64).reshape(shape)


def hf_config(spec):
    return {**BASE, "quantization_config": spec["quantization_config"]}


def build(spec, without_sub_norms=False):
    config_dict = hf_config(spec)
    args = {k: v for k, v in config_dict.items()
            if k not in ("architectures", "model_type", "torch_dtype", "quantization_config")}
    config = AutoConfig.for_model("bitnet", **args)
    config.architectures = config_dict["architectures"]
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float32)
    shapes = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    q = spec["quantization_config"]
    replace_with_bitnet_linear(model, modules_to_not_convert=["lm_head"],
                               quantization_config=BitNetQuantConfig(linear_class=q["linear_class"],
                                                                     quantization_mode=q["quantization_mode"]))
    packed = q["linear_class"] == "bitlinear"
    state, samples = {}, {}
    for name, shape in shapes.items():
        if name == "lm_head.weight":
            continue
        if packed and is_projection(name):
            codes = packed_codes(name, shape, spec["seed"])
            state[name] = pack_weights(torch.from_numpy(codes - 1).to(torch.int8).clone())
            scale = torch.tensor([math.sqrt(2.0 * shape[1] / 3.0)], dtype=torch.float32)
            state[name[:-len("weight")] + "weight_scale"] = scale
            t = (codes - 1).flatten()
            samples[name] = {"first": [float(t[0]), float(t[1])], "sum": round(float(t.sum()), 6)}
            samples[name[:-len("weight")] + "weight_scale"] = {"first": [float(scale[0])], "sum": float(scale[0])}
        else:
            tensor = formula_tensor(name, shape, spec["seed"])
            state[name] = tensor
            samples[name] = {"first": [float(v) for v in tensor.flatten()[:2]],
                             "sum": round(float(tensor.double().sum()), 6)}
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    if unexpected or [m for m in missing if m != "lm_head.weight"]:
        raise RuntimeError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    model.lm_head.weight = model.model.embed_tokens.weight
    if without_sub_norms:
        for layer in model.model.layers:
            layer.self_attn.attn_sub_norm = torch.nn.Identity()
            layer.mlp.ffn_sub_norm = torch.nn.Identity()
    model.eval()
    kinds = {type(m).__name__ for m in model.modules()}
    if ("BitLinear" if packed else "AutoBitLinear") not in kinds:
        raise RuntimeError(f"no BitNet linear layers in the model: {kinds}")
    return model, dict(sorted(samples.items()))


def golden(spec, shared):
    config = hf_config(spec)
    tokenizer = tokenizers.Tokenizer.from_file(str(shared / "tokenizers" / spec["tokenizer"] / "tokenizer.json"))
    if tokenizer.get_vocab_size(with_added_tokens=True) != config["vocab_size"]:
        raise ValueError(f"{spec['name']}: vocab_size {config['vocab_size']} != tokenizer size")
    model, samples = build(spec)
    prompt_ids = tokenizer.encode(spec["prompt"]).ids
    ids, logits = greedy(model, prompt_ids, NEW_TOKENS)
    stacked = torch.stack(logits)
    top2 = torch.topk(stacked, 2).values
    margin = float((top2[:, 0] - top2[:, 1]).min())
    if margin < MIN_MARGIN:
        raise RuntimeError(f"{spec['name']}: top-1 margin {margin} < {MIN_MARGIN}; choose another seed")
    full = full_forward_logits(model, prompt_ids, ids)
    cached_vs_full = float((full - stacked).abs().max())
    if cached_vs_full > 1e-3:
        raise RuntimeError(f"{spec['name']}: cached and full forward differ by {cached_vs_full}")
    other, _ = build(spec, without_sub_norms=True)
    other_ids, _ = greedy(other, prompt_ids, NEW_TOKENS)
    change = float((full_forward_logits(other, prompt_ids, ids) - stacked).abs().max())
    if change < 1e-2:
        raise RuntimeError(f"{spec['name']}: removing the sub-norms changes logits by only {change}")
    return {
        "model": spec["name"],
        "about": spec["about"],
        "generator": f"transformers {transformers.__version__} torch {torch.__version__} "
                     f"tokenizers {tokenizers.__version__}, attn_implementation=eager, float32, tools/reference/"
                     f"tiny_bitnet.py",
        "tokenizer": spec["tokenizer"],
        "config": config,
        "weights": {"seed": spec["seed"], "samples": samples},
        "prompt": spec["prompt"],
        "prompt_ids": prompt_ids,
        "greedy_ids": ids,
        "greedy_text": tokenizer.decode(ids, skip_special_tokens=False),
        "logits": [top_entries(logits[s], len(prompt_ids) - 1 + s) for s in range(NEW_TOKENS)],
        "checks": {
            "min_top1_margin": round(margin, 6),
            "max_abs_logit": round(float(stacked.abs().max()), 6),
            "cached_vs_full_max_diff": cached_vs_full,
            "ablation": {
                "removed": "attn_sub_norm and ffn_sub_norm",
                "max_logit_change": round(change, 6),
                "first_differing_greedy_step": first_difference(ids, other_ids),
            },
        },
    }


def main(shared_dir, out_dir, only):
    torch.set_grad_enabled(False)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for spec in [m for m in MODELS if not only or m["name"] in only]:
        doc = golden(spec, Path(shared_dir))
        (out / f"{spec['name']}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                                   encoding="utf-8")
        checks = doc["checks"]
        print(f"{spec['name']}: {len(doc['prompt_ids'])} prompt ids, margin {checks['min_top1_margin']}, "
              f"max |logit| {checks['max_abs_logit']}, cached vs full {checks['cached_vs_full_max_diff']:.2e}, "
              f"ablation: {checks['ablation']}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
