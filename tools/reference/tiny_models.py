#!/usr/bin/env python3
"""Tiny random-weight checkpoints of each supported architecture, with real tokenizers, and their golden greedy output
from Hugging Face transformers (float32, eager attention).

Usage: python tiny_models.py <shared-dir> <output-dir> [model name ...]   (default: every model)
  e.g. /work/venv/bin/python tools/reference/tiny_models.py ../shared src/test/resources/golden/architectures

No checkpoint is written: the weights follow a formula (below) that io.zse.model.FormulaCheckpoint implements
identically, so the test rebuilds the same safetensors file at test time and only <model>.json is committed. Each
file holds the Hugging Face config.json, the tokenizer's folder name (shared/tokenizers/<name>), the weight seed and
a few weight samples (so a test can tell a formula mismatch from an engine bug), the prompt, its ids, 64 greedy ids and
the top-5 logits at every step, plus checks made here:
  min_top1_margin           smallest gap between the best and second-best logit over the 64 steps; the script
                            refuses a model whose margin is under MIN_MARGIN (a near tie would make greedy ids
                            depend on float rounding rather than on correctness)
  cached_vs_full_max_diff   max |logit| difference between the cached step-by-step run and one full forward pass
  ablation                  what the feature under test changes: the same model with it removed (sliding window,
                            rope scaling, biases, separate lm_head, q/k norms), its max |logit| change over the golden sequence
                            and the first step where its greedy ids differ
A model with "further_prompts" (Phi-3: a sequence that starts within LongRoPE's original context and outgrows it) has
the same fields for each of them in "further_cases".

Weight formula (all arithmetic as written; u is exact in float32 and double):
  base      = FNV-1a-64(UTF-8 tensor name) XOR seed
  z_i       = splitmix64 finaliser of (base + (i + 1) * 0x9E3779B97F4A7C15) mod 2^64, i = flat element index
  u_i       = (z_i >>> 40) * 2^-24                            uniform in [0, 1)
  norm weights (1-D, name ending "norm.weight"):  float32(1 + (2u - 1) * 0.2)
  biases (name ending ".bias"):                   float32((2u - 1) * 0.5)
  matrices [rows, cols]:                          float32((2u - 1) * sqrt(3 / cols))   (variance 1 / fan-in)
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

from hf_greedy import greedy, top_entries

NEW_TOKENS = 64
MIN_MARGIN = 1e-3
MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
NORM_SPREAD = 0.2
BIAS_SPREAD = 0.5

COMMON = {
    "hidden_act": "silu",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "torch_dtype": "float32",
    "attention_dropout": 0.0,
    "initializer_range": 0.02,
    "use_cache": True,
}

MODELS = [
    {
        "name": "llama-untied",
        "about": "Llama with a separate lm_head, multi-head attention, Mistral tokenizer",
        "tokenizer": "mistral-7b-v0.1",
        "seed": 1,
        "prompt": "The old lighthouse keeper climbed the stairs and looked out over the sea.",
        "config": {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "intermediate_size": 192,
            "vocab_size": 32000, "max_position_embeddings": 256, "rope_theta": 10000.0, "rope_scaling": None,
            "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
            "bos_token_id": 1, "eos_token_id": 2,
        },
        "ablation": "lm_head replaced by the embeddings (tied)",
    },
    {
        "name": "llama3-rope-scaling",
        "about": "Llama-3.1 style: rope_scaling llama3, GQA 4/2, tied embeddings, Llama-3.1 tokenizer",
        "tokenizer": "llama3_1",
        "seed": 2,
        "prompt": "In the year 2048, a small robot named Pip learned to paint the sky.",
        # Wavelengths of the 8 rotated pairs (theta 500000, head_dim 16): 6.3, 32.5, 168, 869, ... With an original
        # context of 64, pair 1 lies in the interpolated band (16..64) and pairs 2..7 are stretched by 8.
        "config": {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "vocab_size": 128256, "max_position_embeddings": 512, "rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 64},
            "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False,
            "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
        },
        "ablation": "rope_scaling removed",
    },
    {
        "name": "qwen2-bias-tied",
        "about": "Qwen2: q/k/v biases, tied embeddings, GQA 4/2, Qwen tokenizer",
        "tokenizer": "qwen3",
        "seed": 3,
        "prompt": "写一首关于春天的诗。Write a poem about spring, please!",
        "config": {
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "num_attention_heads": 4, "num_key_value_heads": 2,
            "vocab_size": 151669, "max_position_embeddings": 1024, "rope_theta": 1000000.0,
            "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "use_sliding_window": False,
            "sliding_window": None, "max_window_layers": 2,
            "bos_token_id": 151643, "eos_token_id": 151645,
        },
        "ablation": "q/k/v biases set to zero",
    },
    {
        "name": "mistral-sliding-window",
        "about": "Mistral: sliding window 24 < prompt + 64 tokens, GQA 8/2 (head_dim 8), Mistral tokenizer",
        "tokenizer": "mistral-7b-v0.1",
        "seed": 4,
        "prompt": "Once upon a time, in a quiet village by the river, there lived",
        "config": {
            "architectures": ["MistralForCausalLM"], "model_type": "mistral",
            "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 8,
            "vocab_size": 32000, "max_position_embeddings": 512, "rope_theta": 10000.0,
            "sliding_window": 24, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
            "bos_token_id": 1, "eos_token_id": 2,
        },
        "ablation": "sliding_window removed",
    },
    {
        "name": "qwen3-qk-norm",
        "about": "Qwen3: per-head q/k RMSNorm, no biases, head_dim 32 (heads x head_dim != hidden), GQA 4/2, tied",
        "tokenizer": "qwen3",
        "seed": 5,
        "prompt": "Explain why the sky is blue in one short paragraph.",
        "config": {
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
            "vocab_size": 151669, "max_position_embeddings": 1024, "rope_theta": 1000000.0,
            "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "attention_bias": False,
            "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2,
            "bos_token_id": 151643, "eos_token_id": 151645,
        },
        "ablation": "q_norm and k_norm removed",
    },
    {
        "name": "phi3-longrope",
        "about": "Phi-3.5 style: fused qkv_proj and gate_up_proj, longrope (original context 16 < prompt, attention "
                 "factor 1.5 from 512 / 16), GQA 4/2, Llama-2 SentencePiece (Mistral) tokenizer",
        "tokenizer": "mistral-7b-v0.1",
        "seed": 8,
        "prompt": "The little fox ran through the snowy forest, looking for a warm place to sleep before night fell.",
        # transformers picks the factor set of each forward pass by its last position: this prompt exceeds the original
        # context in its first pass, so every position is rotated with the long factors. The further prompt (12 ids,
        # a prefix of this one) fits the original context: it and the first generated tokens are rotated with the short
        # factors, and their keys stay so in the cache while the tokens from position 16 on get the long factors.
        "further_prompts": ["The little fox ran through the snowy forest,"],
        "config": {
            "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "vocab_size": 32000, "max_position_embeddings": 512, "original_max_position_embeddings": 16,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "longrope",
                             "short_factor": [1.0, 1.0, 1.02, 1.05, 1.1, 1.2, 1.35, 1.5],
                             "long_factor": [1.0, 1.3, 1.9, 3.2, 5.5, 9.0, 14.0, 21.0]},
            "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "sliding_window": None,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
        },
        "ablation": "short factors instead of the long ones",
    },
    {
        "name": "gemma2-softcap-local",
        "about": "Gemma 2: GeGLU, embeddings times sqrt(64), (1 + w) pre/post norms, attention soft cap 3 and final "
                 "soft cap 4 (both active), local (window 16 < prompt + 64) / global / local layers, "
                 "query_pre_attn_scalar 24 (not head_dim 16), GQA 4/2, tied, Llama-2 SentencePiece (Mistral) tokenizer",
        "tokenizer": "mistral-7b-v0.1",
        "seed": 9,
        "prompt": "The river carried the paper boat past the mill, under the bridge and out towards the sea.",
        "config": {
            "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_activation": "gelu_pytorch_tanh",
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "vocab_size": 32000, "max_position_embeddings": 512, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
            "query_pre_attn_scalar": 24, "sliding_window": 16, "attn_logit_softcapping": 3.0,
            "final_logit_softcapping": 4.0, "tie_word_embeddings": True,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
        },
        "ablation": "attention and final soft-capping removed",
        "more_ablations": ["attention soft-capping removed", "final soft-capping removed",
                           "every layer global (no sliding window)"],
    },
    {
        "name": "gemma3-local-global",
        "about": "Gemma 3: per-head q/k norms with (1 + w), local layers (window 12 < prompt + 64, RoPE base 10000) and "
                 "global ones (every 3rd: base 1e6 with linear rope_scaling 4), GQA 4/1, head_dim 32 (heads x head_dim "
                 "!= hidden), GeGLU, embeddings times sqrt(64), tied, Llama-2 SentencePiece (Mistral) tokenizer",
        "tokenizer": "mistral-7b-v0.1",
        "seed": 10,
        "prompt": "A lantern swung in the wind as the travellers reached the gate of the sleeping town.",
        "config": {
            "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
            "hidden_activation": "gelu_pytorch_tanh",
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32,
            "vocab_size": 32000, "max_position_embeddings": 512, "rope_theta": 1000000.0,
            "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 4.0},
            "rms_norm_eps": 1e-6, "query_pre_attn_scalar": 32, "sliding_window": 12, "sliding_window_pattern": 3,
            "final_logit_softcapping": None, "attn_logit_softcapping": None, "tie_word_embeddings": True,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
        },
        "ablation": "q_norm and k_norm removed",
        "more_ablations": ["every layer global (no sliding window)", "local RoPE base set to the global one"],
    },
]


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def uniforms(name, seed, count):
    """u_i in [0, 1) for i < count, as float64 (exact 24-bit values)."""
    base = np.uint64(fnv1a64(name) ^ seed)
    with np.errstate(over="ignore"):
        z = base + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(40)).astype(np.float64) * 2.0 ** -24


def formula_tensor(name, shape, seed):
    count = int(np.prod(shape))
    signed = 2.0 * uniforms(name, seed, count) - 1.0
    if name.endswith("norm.weight") and len(shape) == 1:
        values = 1.0 + signed * NORM_SPREAD
    elif name.endswith(".bias"):
        values = signed * BIAS_SPREAD
    elif len(shape) == 2:
        values = signed * math.sqrt(3.0 / shape[1])
    else:
        raise ValueError(f"no formula for {name} {shape}")
    return torch.from_numpy(values.astype(np.float32).reshape(shape))


def hf_config(spec):
    config = {**COMMON, **spec["config"]}
    if "hidden_activation" in config:  # Gemma names its activation so and has no hidden_act
        del config["hidden_act"]
    return config


def build(config_dict, seed, attn="eager"):
    """The model of config_dict with formula weights; tied lm_head shares the embeddings."""
    args = {k: v for k, v in config_dict.items() if k not in ("architectures", "model_type", "torch_dtype")}
    config = AutoConfig.for_model(config_dict["model_type"], **args)
    config.architectures = config_dict["architectures"]
    model = AutoModelForCausalLM.from_config(config, attn_implementation=attn, dtype=torch.float32)
    model.eval()
    state = {}
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight" and config.tie_word_embeddings:
            continue
        state[name] = formula_tensor(name, tuple(tensor.shape), seed)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [m for m in missing if m != "lm_head.weight"]:
        raise RuntimeError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    if config.tie_word_embeddings and model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr():
        raise RuntimeError("lm_head is not tied to the embeddings")
    return model, state


def full_forward_logits(model, prompt_ids, generated):
    """Logits [64, vocab] of the whole sequence in one pass without a cache, at the steps that chose each id."""
    sequence = torch.tensor([prompt_ids + generated[:-1]])
    with torch.no_grad():
        logits = model(input_ids=sequence, use_cache=False).logits[0].float()
    return logits[len(prompt_ids) - 1:]


def ablated(spec, model, removed=None):
    """The model without the feature under test (or the one named by removed, from spec["more_ablations"])."""
    config = hf_config(spec)
    name = spec["name"]
    removed = removed or spec["ablation"]
    if name.startswith("gemma"):
        return gemma_ablated(spec, config, removed)
    if name == "mistral-sliding-window":
        return build({**config, "sliding_window": None}, spec["seed"])[0]
    if name == "llama3-rope-scaling":
        return build({**config, "rope_scaling": None}, spec["seed"])[0]
    if name == "phi3-longrope":
        short = config["rope_scaling"]["short_factor"]
        return build({**config, "rope_scaling": {**config["rope_scaling"], "long_factor": short}}, spec["seed"])[0]
    other, _ = build(config, spec["seed"])
    with torch.no_grad():
        if name == "qwen2-bias-tied":
            for layer in other.model.layers:
                for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                    proj.bias.zero_()
        elif name == "qwen3-qk-norm":
            for layer in other.model.layers:
                layer.self_attn.q_norm = torch.nn.Identity()
                layer.self_attn.k_norm = torch.nn.Identity()
        else:
            other.lm_head.weight.copy_(other.model.embed_tokens.weight)
    return other


def gemma_ablated(spec, config, removed):
    layers = config["num_hidden_layers"]
    if removed == "attention and final soft-capping removed":
        return build({**config, "attn_logit_softcapping": None, "final_logit_softcapping": None}, spec["seed"])[0]
    if removed == "attention soft-capping removed":
        return build({**config, "attn_logit_softcapping": None}, spec["seed"])[0]
    if removed == "final soft-capping removed":
        return build({**config, "final_logit_softcapping": None}, spec["seed"])[0]
    if removed == "every layer global (no sliding window)":
        return build({**config, "layer_types": ["full_attention"] * layers}, spec["seed"])[0]
    if removed == "local RoPE base set to the global one":
        return build({**config, "rope_local_base_freq": config["rope_theta"]}, spec["seed"])[0]
    if removed == "q_norm and k_norm removed":
        other, _ = build(config, spec["seed"])
        for layer in other.model.layers:
            layer.self_attn.q_norm = torch.nn.Identity()
            layer.self_attn.k_norm = torch.nn.Identity()
        return other
    raise ValueError(removed)


def ablation(spec, model, prompt_ids, ids, stacked, removed=None):
    """What removing a feature does: its max |logit| change over the golden sequence and first differing greedy step."""
    other = ablated(spec, model, removed)
    other_ids, _ = greedy(other, prompt_ids, NEW_TOKENS)
    change = float((full_forward_logits(other, prompt_ids, ids) - stacked).abs().max())
    if change < 1e-2:
        raise RuntimeError(f"{spec['name']}: removing the feature ({removed}) changes logits by only {change}")
    return {"removed": removed or spec["ablation"], "max_logit_change": round(change, 6),
            "first_differing_greedy_step": first_difference(ids, other_ids)}


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def run_case(spec, model, tokenizer, prompt):
    """Greedy ids and logits for one prompt, with the checks that make them a useful golden."""
    config = hf_config(spec)
    prompt_ids = tokenizer.encode(prompt).ids
    ids, logits = greedy(model, prompt_ids, NEW_TOKENS)
    stacked = torch.stack(logits)

    top2 = torch.topk(stacked, 2).values
    margin = float((top2[:, 0] - top2[:, 1]).min())
    if margin < MIN_MARGIN:
        raise RuntimeError(f"{spec['name']}: top-1 margin {margin} < {MIN_MARGIN}; choose another seed")
    full = full_forward_logits(model, prompt_ids, ids)
    cached_vs_full = float((full - stacked).abs().max())
    # LongRoPE with a cache: a sequence that starts within the original context and outgrows it keeps its early keys
    # rotated with the short factors, which one forward pass over the whole sequence (long factors everywhere) does not.
    grows_past_original = (spec["name"].startswith("phi3") and len(prompt_ids) <= config["original_max_position_embeddings"]
                           < len(prompt_ids) + NEW_TOKENS - 1)
    if grows_past_original and cached_vs_full < 1e-2:
        raise RuntimeError(f"{spec['name']}: the cached run should differ from one full pass, by {cached_vs_full} only")
    if not grows_past_original and cached_vs_full > 1e-4:
        raise RuntimeError(f"{spec['name']}: cached and full forward differ by {cached_vs_full}")

    main_ablation = ablation(spec, model, prompt_ids, ids, stacked)
    more_ablations = [ablation(spec, model, prompt_ids, ids, stacked, r) for r in spec.get("more_ablations", [])]
    if "sliding_window" in config and config["sliding_window"] \
            and len(prompt_ids) + NEW_TOKENS <= config["sliding_window"]:
        raise RuntimeError("the sequence does not exceed the sliding window")
    if spec["name"] == "phi3-longrope" and len(prompt_ids) + NEW_TOKENS <= config["original_max_position_embeddings"]:
        raise RuntimeError("the sequence does not exceed the original context")

    return {
        "prompt": prompt,
        "prompt_ids": prompt_ids,
        "greedy_ids": ids,
        "greedy_text": tokenizer.decode(ids, skip_special_tokens=False),
        "logits": [top_entries(logits[s], len(prompt_ids) - 1 + s) for s in range(NEW_TOKENS)],
        "checks": {
            "min_top1_margin": round(margin, 6),
            "max_abs_logit": round(float(stacked.abs().max()), 6),
            "cached_vs_full_max_diff": cached_vs_full,
            "ablation": main_ablation,
            **({"more_ablations": more_ablations} if more_ablations else {}),
        },
    }


def golden(spec, shared):
    config = hf_config(spec)
    tokenizer = tokenizers.Tokenizer.from_file(str(shared / "tokenizers" / spec["tokenizer"] / "tokenizer.json"))
    if tokenizer.get_vocab_size(with_added_tokens=True) != config["vocab_size"]:
        raise ValueError(f"{spec['name']}: vocab_size {config['vocab_size']} != tokenizer size "
                         f"{tokenizer.get_vocab_size(with_added_tokens=True)}")
    model, state = build(config, spec["seed"])
    first = run_case(spec, model, tokenizer, spec["prompt"])
    doc = {
        "model": spec["name"],
        "about": spec["about"],
        "generator": f"transformers {transformers.__version__} torch {torch.__version__} "
                     f"tokenizers {tokenizers.__version__}, attn_implementation=eager, float32",
        "tokenizer": spec["tokenizer"],
        "config": config,
        "weights": {
            "seed": spec["seed"],
            "samples": {name: {"first": [float(v) for v in t.flatten()[:2]],
                               "sum": round(float(t.double().sum()), 6)} for name, t in sorted(state.items())},
        },
        **first,
    }
    if spec.get("further_prompts"):
        doc["further_cases"] = [run_case(spec, model, tokenizer, p) for p in spec["further_prompts"]]
    return doc


def main(shared_dir, out_dir, only):
    torch.set_grad_enabled(False)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for spec in [m for m in MODELS if not only or m["name"] in only]:
        doc = golden(spec, Path(shared_dir))
        (out / f"{spec['name']}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                                   encoding="utf-8")
        for case in [doc] + doc.get("further_cases", []):
            checks = case["checks"]
            print(f"{spec['name']}: {len(case['prompt_ids'])} prompt ids, margin {checks['min_top1_margin']}, "
                  f"max |logit| {checks['max_abs_logit']}, cached vs full {checks['cached_vs_full_max_diff']:.2e}, "
                  f"ablation ({checks['ablation']['removed']}): {checks['ablation']}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
