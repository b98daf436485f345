#!/usr/bin/env bash
# Packs what the GPU machine needs to run the CUDA tests and bench/gpu.sh (it has nvcc but no JDK, Maven or network)
# under the device's 64 MiB limit: into .gpu/bundle.tar.xz a jlinked runtime, the packaged app (its jars stored, with
# lib/native/libzse_cuda.so built for sm_90 only, the lent H100/H200), the test classes (without the GGUF fixtures),
# the JUnit jars, tools/gpu/RunTests, bench/EngineLoad and bench/StagingCopy compiled; into .gpu/llama.cpp.tar.xz the
# llama.cpp source tree of $LLAMA_CPP_SOURCE (default ../peer/llama.cpp, an export of github:ggerganov/llama.cpp
# without models/) for tools/gpu/peer.sh; with BASELINE_LIBRARY, an earlier build's library to time against (below).
# Run after `./mvnw package` (and a test-compile); then tools/gpu/device.sh there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/tools/jdk.sh"
cd "$root"
if [ ! -f target/quarkus-app/lib/native/libzse_cuda.so ]; then
  echo "no libzse_cuda.so: build with nvcc on PATH" >&2
  exit 1
fi
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
# Modules: what the server and the tests load (jdk.zipfs for jar resources, jdk.crypto.ec for TLS-capable clients,
# jdk.management for the server's memory readings: without it the model fails to load).
# zip-0 inside, xz outside: xz packs the uncompressed modules image smaller than jlink's zip-9. The CDS archive of the
# runtime's classes (2.7 MB packed; the one for uncompressed pointers is left out) spares each JVM start parsing them.
"$JAVA_HOME/bin/jlink" --add-modules java.base,jdk.incubator.vector,java.logging,java.management,java.naming,\
java.net.http,java.sql,jdk.unsupported,java.xml,jdk.crypto.ec,jdk.zipfs,jdk.management --strip-debug --no-man-pages \
  --no-header-files --compress=zip-0 --generate-cds-archive --output "$stage/runtime" > /dev/null 2>&1
rm -f "$stage/runtime/lib/server/classes_nocoops.jsa"
cp -a target/quarkus-app "$stage/app"
# sm_90 only: a third of the size of the five-target library the deploy images carry.
ZSE_CUDA_ARCHS=90 src/main/native/cuda/build.sh target/native-sm90 >&2
cp target/native-sm90/libzse_cuda.so "$stage/app/lib/native/libzse_cuda.so"
cp -a target/test-classes "$stage/test-classes" && rm -rf "$stage"/test-classes/zse-engine
# The test classes' Qwen3 and Mistral tokenizers (3.9 MB) are left out: the CUDA tests that read them read
# ../shared's copies, packed below.
rm -rf "$stage"/test-classes/tokenizers/{qwen3,mistral-7b-v0.1}
# of the GGUF fixtures (26 MB), only those the CUDA tests read (CudaGoldenTest's K-quant files)
find "$stage/test-classes/gguf" -type f ! -name 'tiny-kquant-*' ! -name 'tiny-phi3-q4_k_m.*' \
  ! -name 'tiny-gemma3-q4_k_m.*' -delete
mkdir -p "$stage/junit" "$stage/tools" "$stage/tokenizers" "$stage/demo"
# The device has no ../shared: zse synth --preset llama-3-8b takes its vocabulary from llama3_1, and CudaGoldenTest and
# CudaDecodeGraphTest read all three (without them the fifth run skipped 10 of their architectures).
cp -a ../shared/tokenizers/{llama3_1,mistral-7b-v0.1,qwen3} "$stage/tokenizers/"
# The demo checkpoint the JDK AOT caches are trained on (tools/train-aot-cache.sh, deploy/docker/train-aot-cache.sh):
# the device's tree travels without src/test/resources, and without the caches the fifth run's first token and
# server start were timed untrained.
cp -a src/test/resources/models/tinystories-656k "$stage/demo/"
./mvnw -B -q dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$stage/cp.txt" >&2
tr ':' '\n' < "$stage/cp.txt" | grep -E '/(junit-(jupiter|platform)-[a-z-]+|opentest4j|apiguardian-api)-[0-9]' \
  | xargs -I{} cp {} "$stage/junit/"
"$JAVA_HOME/bin/javac" -d "$stage/tools" -cp "$(ls "$stage"/junit/*.jar | paste -sd:)" tools/gpu/RunTests.java
# The jars' entries stored, not deflated, for xz to pack: the bundle went from 57.3 to about 47 MiB (ABI 20's kernels
# had taken it, with the tree and llama.cpp's source, past the 64 MiB limit)
find "$stage/app" "$stage/junit" -name '*.jar' -print0 | xargs -0 python3 tools/gpu/store_jars.py
"$JAVA_HOME/bin/javac" -d "$stage/tools" bench/EngineLoad.java bench/StagingCopy.java
# the commit the app was built from (the device's copy of the tree need not have it), "+" when the tree had changes
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src pom.xml || echo +)" > "$stage/COMMIT"
mkdir -p .gpu
# xz -9 (a 64 MiB window): 57.2 MB where -6 gave 59.1, which with llama.cpp's 3.9 and the tree's 4.1 MiB (without
# src/test/resources) passed the 64 MiB limit once the fifteenth session's kernels grew the sm_90 library to 11.3 MB
# BASELINE_LIBRARY: an earlier build's sm_90 libzse_cuda.so, packed as baseline/libzse_cuda.so for an ab line to time
# the new kernels against in the same call (variant ZSE_CUDA_LIBRARY=/tmp/zse-bundle/baseline/libzse_cuda.so). Next to
# the new library in the archive it adds about 4 MB (the sixth run's 7.6 MB alone); leave the peer's source out
# then (LLAMA_CPP_SOURCE=none) to stay under the limit.
parts=(COMMIT runtime app)
if [ -n "${BASELINE_LIBRARY:-}" ]; then
  mkdir -p "$stage/baseline" && cp "$BASELINE_LIBRARY" "$stage/baseline/libzse_cuda.so"
  parts+=(baseline)
fi
tar -C "$stage" -cf - "${parts[@]}" test-classes junit tools tokenizers demo | xz -T0 -9 > .gpu/bundle.tar.xz
peer="${LLAMA_CPP_SOURCE:-$root/../peer/llama.cpp}"
if [ -f "$peer/CMakeLists.txt" ]; then
  # without the backends the CUDA build leaves out (ggml adds a backend's folder only when it is enabled)
  tar -C "$peer" --exclude=./models --exclude=./build --exclude=./docs --exclude=./media --exclude=./tests \
    --exclude='./ggml/src/ggml-'{vulkan,sycl,metal,kompute,cann,opencl} -cf - . | xz -T0 -6 > .gpu/llama.cpp.tar.xz
else
  rm -f .gpu/llama.cpp.tar.xz
  echo "no llama.cpp source at $peer: the device run will have no peer (set LLAMA_CPP_SOURCE)" >&2
fi
ls -la .gpu/*.tar.xz
# What the device call will carry: these archives and the tree's files, which travel with src/test/resources moved
# out (the device refuses more than 64 MiB in all, and the session's time has gone into packing by then)
tree=$(git ls-files -z | grep -zv '^src/test/resources/' | xargs -0 stat -c %s 2>/dev/null \
  | awk '{ s += $1 } END { print s }')
archives=$(stat -c %s .gpu/*.tar.xz | awk '{ s += $1 } END { print s }')
awk -v t="$tree" -v a="$archives" 'BEGIN { m = (t + a) / 1048576
  printf "carry: %.1f MiB of 64 (archives %.1f, tree %.1f)\n", m, a / 1048576, t / 1048576; exit m > 64 }' \
  || { echo "past the device's 64 MiB: leave the peer's source out (LLAMA_CPP_SOURCE=none) or slim the bundle" >&2
       exit 1; }
