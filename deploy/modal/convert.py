"""One-off conversion on Modal: download a Hugging Face checkpoint onto the `zse-models` Volume and convert it with
`zse convert` into the .zse file that app.py serves. Runs on CPU; no GPU is needed to convert.

    modal run deploy/modal/convert.py --repo meta-llama/Llama-3.2-1B-Instruct --quant q4
    HF_TOKEN=hf_... modal run deploy/modal/convert.py --repo ...   # gated models
"""

import os
import subprocess
from pathlib import Path

import modal

MODELS_DIR = "/models"
REPO_ROOT = Path(__file__).resolve().parents[2] if modal.is_local() else Path("/")
# Gated repositories need a token: HF_TOKEN=hf_... modal run deploy/modal/convert.py ...
HF_SECRETS = [modal.Secret.from_dict({"HF_TOKEN": os.environ["HF_TOKEN"]})] if "HF_TOKEN" in os.environ else []

image = (
    modal.Image.from_dockerfile(REPO_ROOT / "Dockerfile", context_dir=REPO_ROOT, add_python="3.12")
    .entrypoint([])
    .pip_install("huggingface_hub>=0.25")
)
models = modal.Volume.from_name("zse-models", create_if_missing=True)
app = modal.App("zse-convert", image=image)


@app.function(
    volumes={MODELS_DIR: models},
    secrets=HF_SECRETS,
    cpu=8,
    memory=32768,
    timeout=3600,
)
def convert(repo: str, quant: str, output: str) -> str:
    from huggingface_hub import snapshot_download

    checkpoint = Path(MODELS_DIR) / "hf" / repo.replace("/", "--")
    snapshot_download(
        repo,
        local_dir=checkpoint,
        allow_patterns=["*.json", "*.safetensors", "tokenizer.model", "*.jinja"],
    )
    target = Path(MODELS_DIR) / output
    subprocess.run(
        ["/app/bin/entrypoint.sh", "convert", str(checkpoint), "-o", str(target), "--quant", quant, "--force"],
        check=True,
    )
    subprocess.run(["/app/bin/entrypoint.sh", "inspect", str(target)], check=True)
    models.commit()
    return str(target)


@app.local_entrypoint()
def main(repo: str, quant: str = "q4", output: str = "") -> None:
    name = output or f"{repo.split('/')[-1].lower()}-{quant}.zse"
    path = convert.remote(repo, quant, name)
    print(f"converted {repo} -> volume zse-models:{path}")
    print(f"serve it with: ZSE_MODEL_FILE={name} modal deploy deploy/modal/app.py")
