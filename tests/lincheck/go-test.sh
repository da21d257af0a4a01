#!/usr/bin/env bash
# Runs xkv-lincheck's go test (tools/lincheck/*_test.go): its model and its CLI.
#   go-test.sh MODULE_DIR GO
set -euo pipefail
cd "$1"
GOFLAGS=-buildvcs=false GOTOOLCHAIN=local "$2" test -count=1 ./...
