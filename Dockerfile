# syntax=docker/dockerfile:1
# JVM image: the Quarkus app (aot-jar packaging) on JDK 25 over an NVIDIA CUDA base, libzse_cuda.so next to the app,
# and a JDK AOT cache (JEP 483/514) trained at build time by serving the bundled demo model and calling the API.
#   docker build -t zse:jvm .
#   docker run --gpus all -p 8080:8080 -v "$PWD/models:/models" -e ZSE_MODEL_PATH=/models/model.zse zse:jvm
# Any zse command runs too: docker run --rm -v "$PWD/models:/models" zse:jvm convert /models/hf -o /models/model.zse
ARG CUDA_VERSION=12.8.1
ARG UBUNTU=ubuntu24.04
ARG JDK_IMAGE=eclipse-temurin:25-jdk-noble

FROM ${JDK_IMAGE} AS jdk

# Build: Maven compiles the app and, because nvcc and gcc are on PATH here, libzse_cuda.so (src/main/native/cuda/build.sh:
# sm_80/86/89/90 SASS + compute_90 PTX, CUDA runtime linked statically) and libzse_cpu.so (the SIMD CPU kernels, picked
# by CPU features at run time) into target/quarkus-app/lib/native/.
FROM nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build
ARG NVCC_THREADS=4
ENV JAVA_HOME=/opt/java/openjdk ZSE_NVCC_THREADS=${NVCC_THREADS}
COPY --from=jdk /opt/java/openjdk /opt/java/openjdk
WORKDIR /src
COPY mvnw pom.xml ./
COPY .mvn .mvn
RUN ./mvnw -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:go-offline
COPY src src
RUN ./mvnw -B -DskipTests package \
 && test -f target/quarkus-app/lib/native/libzse_cuda.so \
 && test -f target/quarkus-app/lib/native/libzse_cpu.so \
 && ! ldd target/quarkus-app/lib/native/libzse_cuda.so | grep -q libcudart

FROM nvidia/cuda:${CUDA_VERSION}-base-${UBUNTU}
ENV JAVA_HOME=/opt/java/openjdk \
    LANG=C.UTF-8 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
COPY --from=jdk /opt/java/openjdk /opt/java/openjdk
# curl: the AOT training run below and container health checks use it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --create-home --home-dir /home/zse zse \
 && mkdir -p /models && chown zse:zse /models
WORKDIR /app
# The repository's own launcher (./zse) and JDK finder run the app with the flags it needs
# (--add-modules jdk.incubator.vector for serve/generate/bench, --enable-native-access=ALL-UNNAMED).
COPY zse ./zse
COPY tools/jdk.sh tools/serve-jvm-flags.sh ./tools/
COPY deploy/docker/entrypoint.sh deploy/docker/train-aot-cache.sh ./bin/
COPY --from=build /src/target/quarkus-app ./target/quarkus-app
COPY --from=build /src/src/test/resources/models/tinystories-656k ./demo/tinystories-656k
# Training run: convert the demo model, serve it on the CPU, stream a chat completion, stop with SIGTERM; the JVM writes
# the AOT cache on exit. The entrypoint passes -XX:AOTCache=/app/zse.aot to serve (same JDK, jar and flags).
RUN ./bin/train-aot-cache.sh /app/zse.aot
USER zse
ENV PORT=8080 \
    ZSE_AOT_CACHE=/app/zse.aot
EXPOSE 8080
ENTRYPOINT ["/app/bin/entrypoint.sh"]
CMD ["serve"]
