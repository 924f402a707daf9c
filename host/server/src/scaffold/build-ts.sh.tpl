#!/bin/sh
# Tests the tools under Node, then builds {{component}} with jco and
# componentize-js on QuickJS. The first run installs package.json's pinned
# tools and @toolhost/sdk into node_modules. Needs Node 22.18 or later.
set -eu
cd "$(dirname "$0")"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 22 || (a === 22 && b < 18)) { console.error(`Node ${process.version}: the tests need 22.18 or later (type stripping, module hooks)`); process.exit(1); }'
if [ ! -f node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
  echo "installing node_modules (jco, componentize-js, @toolhost/sdk {{sdk_version}})"
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error
fi
node --import @toolhost/sdk/register --test --test-reporter=dot '*.test.ts'
node_modules/.bin/jco componentize "$PWD/app.ts" --wit "$PWD/wit" \
  --world-name mcp-plugin --backend qjs --backend-qjs-disable-async \
  --bundle-config "$PWD/bundle.config.js" -o "$PWD/{{component}}.tmp" >/dev/null
mv {{component}}.tmp {{component}}
echo "built {{component}}"
