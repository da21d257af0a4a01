#!/usr/bin/env bash
# Runs xkv-lincheck's go test (tools/lincheck/*_test.go): its model and its CLI.
#   go-test.sh MODULE_DIR GO_COMMAND
set -euo pipefail
cd "$1"
# the command carries its environment (GOFLAGS=... GOTOOLCHAIN=... go)
eval "$2 test -count=1 ./..."
