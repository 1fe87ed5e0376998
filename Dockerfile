# ventana in a container: `docker compose up` (see compose.yaml), or
#   docker build -t ventana . && docker run --env-file .env -v ventana-data:/data ventana
# Configure a channel (TELEGRAM_BOT_TOKEN or the four WHATSAPP_* variables): with none,
# `ventana run` falls back to the console, which has no terminal here and ends at once.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
COPY memory ./memory
COPY providers ./providers
COPY config ./config
RUN pip install . \
    && useradd --create-home --uid 10001 ventana \
    && mkdir /data \
    && chown ventana:ventana /data

USER ventana
ENV VENTANA_DB=/data/ventana.db \
    VENTANA_HTTP_HOST=0.0.0.0 \
    VENTANA_HTTP_PORT=8080 \
    VENTANA_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080

# /healthz answers 200 while the database does; python is the only client in a slim image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('VENTANA_HTTP_PORT', '8080') + '/healthz', timeout=4)"]

ENTRYPOINT ["ventana"]
CMD ["run"]
