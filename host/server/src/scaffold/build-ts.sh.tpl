#!/bin/sh
# Tests the tools under Node, then builds {{component}} with the repository's
# pinned jco and componentize-js on QuickJS (`make ts-plugins` in {{repo}}
# installs them).
set -eu
cd "$(dirname "$0")"
repo="{{repo}}"
[ -x "$repo/plugins/ts/node_modules/.bin/jco" ] || { echo "run 'make ts-plugins' in $repo first (it installs jco)" >&2; exit 1; }
[ -e node_modules ] || ln -s "$repo/plugins/ts/node_modules" node_modules
PATH="$repo/.tools/node/bin:$PATH"
node --import @toolhost/sdk/register --test --test-reporter=dot '*.test.ts'
"$repo/plugins/ts/node_modules/.bin/jco" componentize "$PWD/app.ts" --wit "$repo/wit" \
  --world-name mcp-plugin --backend qjs --backend-qjs-disable-async \
  --bundle-config "$repo/plugins/ts/bundle.config.js" -o "$PWD/{{component}}.tmp" >/dev/null
mv {{component}}.tmp {{component}}
echo "built {{component}}"
