#!/bin/sh
# Tests the tools natively, then builds {{component}} with the repository's
# pinned componentize-py (`make python-plugins` in {{repo}} installs it).
set -eu
cd "$(dirname "$0")"
repo="{{repo}}"
py="$repo/.venv-componentize/bin/python"
[ -x "$py" ] || { echo "run 'make python-plugins' in $repo first (it installs componentize-py)" >&2; exit 1; }
PYTHONPATH="$repo/plugins/python/sdk:." PYTHONDONTWRITEBYTECODE=1 "$py" -m unittest -q test_app
"$repo/.venv-componentize/bin/componentize-py" -d "$repo/wit" -w mcp-plugin \
  componentize app -p "$repo/plugins/python/sdk" -p . -o {{component}}.tmp >/dev/null
mv {{component}}.tmp {{component}}
echo "built {{component}}"
