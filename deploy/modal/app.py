"""ZSE on Modal: the JVM image from the repository's Dockerfile, one GPU per container, the .zse model on a Volume.

    modal deploy deploy/modal/app.py            # from the repository root; prints the URL
    ZSE_MODEL_FILE=llama-3.2-1b-q4.zse modal deploy deploy/modal/app.py

The Java server binds its port at once and loads the model in the background; the enter hook waits for
/q/health/ready, so Modal routes requests to a container only once it can answer them. Scale to zero is Modal's
default: containers stop after SCALEDOWN_WINDOW idle seconds. On scale-down or preemption the exit hook forwards
SIGTERM to the JVM, which stops accepting requests and finishes the streams in flight (Modal allows 30 s).
"""

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import modal

APP_NAME = "zse"
PORT = 8080
MODELS_DIR = "/models"
# Read on the machine that runs `modal deploy`; baked into the image environment.
MODEL_FILE = os.environ.get("ZSE_MODEL_FILE", "model.zse")
# First choice first; Modal tries the next type when none of the previous is free.
GPUS = ["H100", "A100-80GB", "L40S", "A10"]
# Seconds a cold container may take from start to ready: JVM start is ~1 s with the AOT cache, the rest is paging the
# .zse file in from the Volume and uploading it to the GPU (about 8 GB for an 8B Q8 model).
STARTUP_TIMEOUT = 600
SCALEDOWN_WINDOW = 300
# Requests one container takes at once (the server batches them); Modal adds containers above TARGET_INPUTS.
MAX_INPUTS = 32
TARGET_INPUTS = 16
# The Dockerfile and build context are read where `modal deploy` runs; inside the container this module is imported
# again, where the image is already built.
REPO_ROOT = Path(__file__).resolve().parents[2] if modal.is_local() else Path("/")

image = (
    modal.Image.from_dockerfile(REPO_ROOT / "Dockerfile", context_dir=REPO_ROOT, add_python="3.12")
    # Modal runs its own container process; the image's ENTRYPOINT (which starts the server) must not wrap it.
    .entrypoint([])
    .env({"ZSE_MODEL_PATH": f"{MODELS_DIR}/{MODEL_FILE}", "PORT": str(PORT)})
)
models = modal.Volume.from_name("zse-models", create_if_missing=True)
app = modal.App(APP_NAME, image=image)


def wait_until_ready(process: subprocess.Popen, deadline: float) -> None:
    """Polls the Quarkus readiness check until it answers 200, the server exits, or the deadline passes."""
    url = f"http://127.0.0.1:{PORT}/q/health/ready"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"zse serve exited with status {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"zse serve was not ready within {STARTUP_TIMEOUT} s")


@app.cls(
    gpu=GPUS,
    volumes={MODELS_DIR: models},
    secrets=[modal.Secret.from_name("zse-api-keys", required_keys=["ZSE_API_KEYS"])],
    scaledown_window=SCALEDOWN_WINDOW,
    timeout=STARTUP_TIMEOUT,
)
@modal.concurrent(max_inputs=MAX_INPUTS, target_inputs=TARGET_INPUTS)
class Server:
    @modal.enter()
    def start(self) -> None:
        # The image's entrypoint script adds the AOT cache and the JVM flags, as `docker run` would.
        self.process = subprocess.Popen(["/app/bin/entrypoint.sh", "serve"])
        wait_until_ready(self.process, time.monotonic() + STARTUP_TIMEOUT)

    @modal.web_server(PORT, startup_timeout=STARTUP_TIMEOUT, label=APP_NAME)
    def serve(self) -> None:
        """The server started in `start` is already listening on PORT."""

    @modal.exit()
    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=25)
        except subprocess.TimeoutExpired:
            self.process.kill()
