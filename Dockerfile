# The salesgym HTTP service. Build and run (any OCI engine; CI builds and runs it where one answers, see
# .ci/container-check, and otherwise checks this COPY set installed in a fresh venv):
#   docker build -t salesgym-serve .
#   docker run -p 8765:8765 -v salesgym-data:/data \
#     -e SALESGYM_OPERATOR_TOKEN=... -e SALESGYM_AGENT_TOKENS=... -e SALESGYM_VERIFIER_KEY=... salesgym-serve
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
COPY splits ./splits
RUN pip install --no-cache-dir '.[serve]'
# sessions live in /data (mount a volume to keep them across containers); tokens come from the environment
VOLUME /data
EXPOSE 8765
RUN useradd --create-home salesgym && mkdir -p /data && chown salesgym /data
USER salesgym
# listening beyond loopback: the service refuses to start unless the operator and agent tokens are set
CMD ["salesgym", "serve", "--host", "0.0.0.0", "--port", "8765", "--db", "/data/serve.sqlite"]
