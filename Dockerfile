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
# A young generation of 8 MB semi-spaces instead of V8's 16: the API's answers (up to ~50 KB
# for a company report) die young, and the default let its RSS peak above 200 MB under report
# load (npm run bench, which starts the API with this same NODE_OPTIONS line). How far the old
# generation may grow between full collections is set by the API process itself
# (core/http-server/limit-heap-growth.ts): NODE_OPTIONS refuses that V8 flag.
ENV NODE_OPTIONS="--max-semi-space-size=8"
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# Reference data the sample generator reads at run time (core/sample-data/reference-data.ts).
COPY --from=build --chown=node:node /app/data ./data
USER node
EXPOSE 3000 3001 3002
CMD ["node", "dist/api/main.js"]
