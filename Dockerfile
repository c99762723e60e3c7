# Slim, non-root image; data (database, persona files, gateway token) lives in the /data volume.
#   docker build -t flynn .
#   docker run -d --name flynn -p 127.0.0.1:8765:8765 -v flynn-data:/data \
#       -e ANTHROPIC_API_KEY=... flynn
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY flynn ./flynn
RUN python -m venv /opt/flynn && /opt/flynn/bin/pip install --no-cache-dir .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin flynn \
    && install -d -o flynn -g flynn -m 0700 /data
COPY --from=build /opt/flynn /opt/flynn
ENV PATH=/opt/flynn/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    FLYNN_DATA_DIR=/data \
    FLYNN_CHANNELS__GATEWAY__HOST=0.0.0.0 \
    FLYNN_LOGGING__FORMAT=json
USER flynn
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4).status == 200 else 1)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["flynn"]
CMD ["run"]
