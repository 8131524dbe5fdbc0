# The one image of the service; docker-compose.yml picks the process with `command`.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Type-check and compile to dist/, then keep only the runtime dependencies.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production
# V8's own young generation (16 MB semi-spaces), no NODE_OPTIONS. With 8 MB ones the API ran a
# full collection every half second under financials load (most likely the objects of calls
# waiting for their usage event's commit, promoted before they died): 26–40% fewer calls per
# second and a higher p99, for an RSS peak under report load of 148 MB instead of 174 (measured
# 22 Nov 2026; the target is 200). The RSS is held by the API process itself, which caps how far the old
# generation grows between full collections (core/http-server/tune-heap.ts, which also turns off allocation-site pretenuring;
# the tool server and npm start call it too).
# npm run bench starts its servers with this image's NODE_OPTIONS, when it sets any.
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# Reference data the sample generator reads at run time (core/sample-data/reference-data.ts).
COPY --from=build --chown=node:node /app/data ./data
# The customers' guide the API serves at /docs/getting-started (api/docs/getting-started-guide.ts).
COPY --from=build --chown=node:node /app/docs/getting-started.md /app/docs/getting-started.it.md ./docs/
USER node
EXPOSE 3000 3001 3002
CMD ["node", "dist/api/main.js"]
