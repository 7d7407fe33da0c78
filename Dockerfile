# The salesgym HTTP service. Build and run (any OCI engine; CI builds and runs it where one answers, see
# .ci/container-check, and otherwise checks this COPY set installed in a fresh venv):
#   docker build -t salesgym-serve .
#   docker run -p 8765:8765 -v salesgym-data:/data \
#     -e SALESGYM_OPERATOR_TOKEN=... -e SALESGYM_AGENT_TOKENS=... -e SALESGYM_VERIFIER_KEY=... salesgym-serve
# BASE: any image with python3 (3.11 or later) and its venv module; CI makes one from Debian packages when no
# registry is reachable (.ci/engine.sh)
ARG BASE=python:3.11-slim
FROM ${BASE}
WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
COPY splits ./splits
RUN python3 -m venv /opt/salesgym && /opt/salesgym/bin/pip install --no-cache-dir '.[serve]'
ENV PATH=/opt/salesgym/bin:${PATH}
# sessions live in /data (mount a volume to keep them across containers); tokens come from the environment.
# The user and its /data first: a change under a path after VOLUME declares it is discarded (the first image
# built here, by podman, had a root-owned /data the service could not open its database in)
RUN useradd --create-home salesgym && mkdir -p /data && chown salesgym /data
VOLUME /data
EXPOSE 8765
USER salesgym
# listening beyond loopback: the service refuses to start unless the operator and agent tokens are set
CMD ["salesgym", "serve", "--host", "0.0.0.0", "--port", "8765", "--db", "/data/serve.sqlite"]
