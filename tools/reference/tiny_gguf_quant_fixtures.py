#!/usr/bin/env python3
"""Tiny checkpoints as llama.cpp's own tools write them at F16, Q8_0, Q4_0 and Q4_K_M, with goldens.

Usage: python tiny_gguf_quant_fixtures.py <llama.cpp-dir> <llama-quantize> <output-dir> [MODEL ...]
  e.g. PYTHONPATH=<dir with accelerate, psutil> /work/peer/venv/bin/python tools/reference/tiny_gguf_quant_fixtures.py \
           /work/peer/llama.cpp /work/peer/build/bin/llama-quantize src/test/resources/gguf

The checkpoints are tiny_models.py's llama-untied and qwen2-bias-tied configs (formula weights, seed of each model)
with the TinyStories tokenizer, its special ids and vocabulary 2048 (small files). llama.cpp's Qwen2Model reads only a
byte-level BPE vocabulary, so (as gemma_gguf_fixtures.py does) it writes this tokenizer.json the way its LlamaModel
does (_set_vocab_llama_hf); the weights and hyperparameters under test are untouched. convert_hf_to_gguf.py --outtype f16 writes the F16 file; --outtype f32
and then llama-quantize Q8_0 / Q4_0 / Q4_K_M the others. Rows are 64 long, so llama-quantize cannot use K-quant
blocks of 256 and falls back (its own choice, recorded by the import's notes) for Q4_K_M. Each file's golden is
gguf_fixtures.golden: transformers loading that GGUF (gguf_file=, dequantized to float32), greedy ids and top-5 logits.

Also llama3-rope-scaling and mistral-sliding-window (name them). transformers 5 saves rope_theta and rope_scaling
inside rope_parameters, which llama.cpp's converter (c392e50) does not read: without the old keys it writes no RoPE base
and no llama3 factors, so they are put back into config.json before converting (with llama3's original context at the
top level, where that converter looks for it). transformers' GGUF loader drops the
factors the file then holds (rope_freqs.weight), so the llama3 golden runs the GGUF's dequantized weights in the
checkpoint's own architecture. llama.cpp writes Mistral as a Llama with no sliding window: that GGUF holds no window,
and its golden (transformers reading it) has none either.
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
DEFAULT_MODELS = ("llama-untied", "qwen2-bias-tied")
LEGACY_CONFIG_KEYS = ("rope_theta", "rope_scaling")


def run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL)


def main(llama_cpp, quantize, out, *names):
    llama_cpp, out = Path(llama_cpp), Path(out)
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(0, str(llama_cpp / "gguf-py"))
    import convert_hf_to_gguf as converter

    converter.Qwen2Model.set_vocab = converter.Model._set_vocab_llama_hf
    for spec in [spec for spec in MODELS if spec["name"] in (names or DEFAULT_MODELS)]:
        config = {**COMMON, **spec["config"], "vocab_size": 2048, "bos_token_id": 1, "eos_token_id": 2,
                  "pad_token_id": 0}
        write(converter, quantize, out, "tiny-" + spec["name"], config, spec["seed"])


def write(converter, quantize, out, NAME, CONFIG, seed):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir = tmp / NAME
        model, _ = build(CONFIG, seed)
        model.save_pretrained(model_dir, safe_serialization=True)
        saved = json.loads((model_dir / "config.json").read_text())
        saved.update({key: CONFIG[key] for key in LEGACY_CONFIG_KEYS if CONFIG.get(key) is not None})
        # ... and it takes llama3's original context from the top level (default 8192), not from rope_scaling
        original = (CONFIG.get("rope_scaling") or {}).get("original_max_position_embeddings")
        if original is not None:
            saved["original_max_position_embeddings"] = original
        (model_dir / "config.json").write_text(json.dumps(saved))
        for name in TOKENIZER_FILES:
            shutil.copy(TINYSTORIES / name, model_dir / name)
        for outtype in ["f32", "f16"]:
            sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", outtype,
                        "--outfile", str(tmp / f"{NAME}-{outtype}.gguf")]
            converter.main()
        made = [f"{NAME}-f16.gguf"]
        for kind in ["q8_0", "q4_0", "q4_k_m"]:
            made.append(f"{NAME}-{kind}.gguf")
            run(quantize, tmp / f"{NAME}-f32.gguf", tmp / made[-1], kind.upper())
        adapt, how = None, ""
        if (CONFIG.get("rope_scaling") or {}).get("rope_type") == "llama3":
            adapt = lambda loaded: in_architecture(loaded, CONFIG, seed)
            how = ", its weights run in the checkpoint's architecture (llama3 RoPE scaling, which the loader drops)"
        for name in made:
            doc = golden(tmp, name, model_dir, adapt, how)
            doc["weights"] = {"config": CONFIG, "seed": seed, "formula": "tools/reference/tiny_models.py"}
            (out / name.replace(".gguf", ".json")).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
            (out / (name + ".gz")).write_bytes(gzip.compress((tmp / name).read_bytes(), 9, mtime=0))


def in_architecture(loaded, config, seed):
    """The weights transformers dequantized from the GGUF, in a model built from the checkpoint's config."""
    model, _ = build(config, seed)
    model.load_state_dict(loaded.state_dict())
    return model


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    torch.set_grad_enabled(False)
    main(*sys.argv[1:])
