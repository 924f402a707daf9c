#!/bin/sh
# Tests the tools natively, then builds {{component}} with componentize-py.
# The first run makes the project's own environment, .venv: componentize-py
# as requirements.txt pins it (with its hashes) and toolhost-sdk {{sdk_version}}.
set -eu
cd "$(dirname "$0")"
want="$(cat requirements.txt) toolhost-sdk=={{sdk_version}}{{pip_source}}"
if [ "$(cat .venv/.installed 2>/dev/null)" != "$want" ]; then
  echo "setting up .venv (componentize-py, toolhost-sdk {{sdk_version}})"
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check --require-hashes -r requirements.txt
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "toolhost-sdk=={{sdk_version}}"{{pip_source}}
  printf '%s' "$want" > .venv/.installed
fi
PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -m unittest -q test_app
site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
.venv/bin/componentize-py -d wit -w mcp-plugin componentize app -p . -p "$site" -o {{component}}.tmp >/dev/null
mv {{component}}.tmp {{component}}
echo "built {{component}}"
