#!/usr/bin/env sh
# Regenerates docs/images/vscode.png, the screenshot on docs/editors.md: runs the end-to-end test
# (tests/test_vscode.py), which keeps its screenshot of VS Code where TEMPLATING_VSCODE_SCREENSHOT says.
# Run it from the project's venv (with the lsp extra), after the set-up of docs/contributing.md.
set -eu
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
mkdir -p docs/images
TEMPLATING_VSCODE_SCREENSHOT="$root/docs/images/vscode.png" TEMPLATING_REQUIRE_VSCODE=1 \
    "${PYTHON:-python}" -m pytest tests/test_vscode.py -q -p no:cacheprovider
