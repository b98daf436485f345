#!/usr/bin/env bash
# Lints the deployment files with what this machine has: Python files compile, shell scripts parse, YAML passes
# yamllint (Debian: apt-get install yamllint), Dockerfiles pass dockerfilelint (npm: npm install -g dockerfilelint).
# A linter that is not installed is reported and skipped; hadolint is in neither Debian nor npm.
# The Knative fields, ports and environment names are checked by the JUnit tests in io.zse.deploy.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
status=0
run() {
  local what="$1"; shift
  if "$@"; then echo "ok      $what"; else echo "FAILED  $what"; status=1; fi
}

for file in deploy/smoke.py deploy/modal/*.py; do
  run "python compiles $file" python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$file"
done
for file in deploy/docker/*.sh deploy/modal/*.sh deploy/runpod/*.sh tools/lint-deploy.sh; do
  run "bash parses $file" bash -n "$file"
done
if command -v yamllint > /dev/null; then
  run "yamllint deploy/knative/service.yaml" \
    yamllint -d '{extends: default, rules: {line-length: {max: 120}, document-start: disable}}' deploy/knative/service.yaml
else
  echo "skipped yamllint (not installed: apt-get install yamllint)"
fi
if command -v dockerfilelint > /dev/null; then
  for file in Dockerfile Dockerfile.native; do
    run "dockerfilelint $file" dockerfilelint -c deploy/docker "$file"
  done
else
  echo "skipped dockerfilelint (not installed: npm install -g dockerfilelint)"
fi
exit $status
