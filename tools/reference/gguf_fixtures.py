#!/usr/bin/env python3
"""GGUF fixtures written by llama.cpp's own tools, and what transformers computes from them.

Usage: python gguf_fixtures.py <shared-dir> <llama.cpp-dir> <llama-quantize> <output-dir>
  e.g. /work/peer/venv/bin/python tools/reference/gguf_fixtures.py ../shared /work/peer/llama.cpp \
           /work/peer/build/bin/llama-quantize src/test/resources/gguf

Writes gzip-compressed GGUF files (the tests decompress them) and one golden JSON per file:
  tinystories-656k-{f32,f16,q8_0}.gguf   convert_hf_to_gguf.py --outtype f32/f16/q8_0 of the real TinyStories-656K
  tinystories-656k-q4_0.gguf             llama-quantize of the f32 file (rows of 128: K-quants do not apply)
  tiny-kquant-{q4_k_m,q6_k}.gguf         a 1-layer Llama with rows of 256 (random weights, seed 17, the
                                         TinyStories tokenizer), quantized by llama-quantize from its f32 GGUF
  vocab-{mistral-7b-v0.1,qwen3}.gguf     convert_hf_to_gguf.py --vocab-only for the tokenizers the tokenizer
                                         goldens cover (a SentencePiece "llama" and a byte-level "gpt2" vocabulary)
Each model file's <name>.json holds, in the format of tinystories_greedy.py, the greedy ids and top-5 logits of
transformers' LlamaForCausalLM loaded from that GGUF (from_pretrained(gguf_file=...), which dequantizes every tensor
to float32 and undoes llama.cpp's q/k row order): the dequantizing reference the imported .zse is compared with.
"""
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

from gguf import GGUFReader
from hf_greedy import greedy, top_entries

PROMPTS = ["Once upon a time", "The little dog"]
NEW_TOKENS = 32
LOGIT_STEPS = 8
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


def run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tiny_kquant(shared, out_dir):
    torch.manual_seed(17)
    config = LlamaConfig(hidden_size=256, intermediate_size=256, num_hidden_layers=1, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=2048, max_position_embeddings=256, rms_norm_eps=1e-6,
                         tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, initializer_range=0.08)
    model = LlamaForCausalLM(config).to(torch.float32)
    model.save_pretrained(out_dir, safe_serialization=True)
    for name in TOKENIZER_FILES:
        shutil.copy(shared / "models/tinystories-656k" / name, out_dir / name)


def golden(gguf_dir, name, tokenizer_dir, adapt=None, how=""):
    """adapt: a function of the model transformers loads from the GGUF giving the model to run; how: what it does."""
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name, dtype=torch.float32)
    reader = GGUFReader(gguf_dir / name)
    if not any(t.name == "token_embd.weight" for t in reader.tensors):
        # llama.cpp keeps only output.weight of a tied checkpoint that stores only lm_head (TinyStories); transformers
        # then initialises the embeddings at random and ties lm_head to them. Load untied and copy instead.
        model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name, dtype=torch.float32,
                                                     tie_word_embeddings=False)
        model.model.embed_tokens.weight.data.copy_(model.lm_head.weight.data)
    if adapt is not None:
        model = adapt(model)
    reference = (f"transformers {transformers.__version__} from_pretrained(gguf_file=...), float32, "
                 f"torch {torch.__version__}{how}")
    return golden_of(model, name, tokenizer, reference)


def golden_of(model, name, tokenizer, reference):
    """Greedy ids and top-5 logits of model (a causal LM) on each prompt; reference says what the model is."""
    model.eval()
    cases = []
    for prompt in PROMPTS:
        prompt_ids = tokenizer(prompt)["input_ids"]
        ids, logits = greedy(model, prompt_ids, NEW_TOKENS)
        margins = [float(torch.topk(l, 2).values[0] - torch.topk(l, 2).values[1]) for l in logits]
        cases.append({
            "prompt": prompt,
            "prompt_ids": prompt_ids,
            "greedy_ids": ids,
            "min_top1_margin": round(min(margins), 6),
            "logits": [top_entries(logits[s], len(prompt_ids) - 1 + s) for s in range(LOGIT_STEPS)],
        })
    return {"gguf": name, "reference": reference, "cases": cases}


def main(shared, llama_cpp, quantize, out):
    shared, llama_cpp, out = Path(shared), Path(llama_cpp), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    convert = llama_cpp / "convert_hf_to_gguf.py"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        models = {"tinystories-656k": shared / "models/tinystories-656k", "tiny-kquant": tmp / "tiny-kquant"}
        tiny_kquant(shared, models["tiny-kquant"])
        made = []
        for outtype in ["f32", "f16", "q8_0"]:
            made.append(("tinystories-656k", f"tinystories-656k-{outtype}.gguf"))
            run(sys.executable, convert, models["tinystories-656k"], "--outtype", outtype,
                "--outfile", tmp / made[-1][1])
        run(sys.executable, convert, models["tiny-kquant"], "--outtype", "f32", "--outfile", tmp / "tiny-kquant-f32.gguf")
        for kind in ["q4_0"]:
            made.append(("tinystories-656k", f"tinystories-656k-{kind}.gguf"))
            run(quantize, tmp / "tinystories-656k-f32.gguf", tmp / made[-1][1], kind.upper())
        for kind in ["q4_k_m", "q6_k"]:
            made.append(("tiny-kquant", f"tiny-kquant-{kind}.gguf"))
            run(quantize, tmp / "tiny-kquant-f32.gguf", tmp / made[-1][1], kind.upper())
        for model, name in made:
            doc = golden(tmp, name, models[model])
            (out / name.replace(".gguf", ".json")).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            (out / (name + ".gz")).write_bytes(gzip.compress((tmp / name).read_bytes(), 9, mtime=0))
        for tok, arch in [("mistral-7b-v0.1", "MistralForCausalLM"), ("qwen3", "Qwen2ForCausalLM")]:
            d = tmp / ("vocab-" + tok)
            d.mkdir()
            for f in (shared / "tokenizers" / tok).iterdir():
                shutil.copy(f, d / f.name)
            size = len(json.loads((d / "tokenizer.json").read_text())["model"]["vocab"])
            added = json.loads((d / "tokenizer.json").read_text())["added_tokens"]
            size = max([size] + [a["id"] + 1 for a in added])
            (d / "config.json").write_text(json.dumps({
                "architectures": [arch], "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
                "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512,
                "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "vocab_size": size}))
            run(sys.executable, convert, d, "--vocab-only", "--outfile", tmp / f"vocab-{tok}.gguf")
            (out / f"vocab-{tok}.gguf.gz").write_bytes(
                gzip.compress((tmp / f"vocab-{tok}.gguf").read_bytes(), 9, mtime=0))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
