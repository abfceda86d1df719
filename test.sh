#!/usr/bin/env bash
# Runs Laharsub's whole test suite on a fresh machine and prints one closing line "N passed, N failed".
#   1. .NET: builds the solution (Release) and runs every xUnit project against the real server on loopback;
#      installs Debian's redis-server when missing (the tests start private instances of it on free ports:
#      single nodes, a 3-primary cluster joined with redis-cli --cluster create, and a Sentinel setup whose
#      sentinel is redis-server --sentinel, exactly what Debian's redis-sentinel package runs, so that
#      package is not needed; redis-cli comes with redis-server through redis-tools).
#   2. Browser: if tests/Browser exists, installs what it needs when missing (Debian's chromium,
#      npm packages, Node 22 for the JavaScript client's Node tests) and runs it with node's test runner
#      (TAP), against the Release server build: the jQuery client, the OpenAPI document, and the
#      JavaScript client (tests/Browser/js: unit, Node 22, Chromium, nginx, its npm package).
# The load-test tests race Laharsub against nginx + nchan (loadtest/peers/nchan.conf): Debian's
# nginx-light and libnginx-mod-nchan are installed first when missing.
# Exit status: 0 only when every test passed.
set -uo pipefail
cd "$(dirname "$0")"
root=$(pwd)
results="$root/artifacts/test-results"
rm -rf "$results"
mkdir -p "$results"
status=0

echo "== building (Release)"
if ! dotnet build Laharsub.sln -c Release -nologo -v quiet; then
  echo "0 passed, 1 failed"
  exit 1
fi

install_debian_package() {
  if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; fi
}

if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server is missing: installing Debian's redis-server package"
  # A failed install is not fatal here: the Redis tests then fail and say why.
  install_debian_package redis-server || echo "installing redis-server failed: the Redis tests will fail"
fi

# SystemdUnitTests check deploy/laharsub.service with systemd-analyze verify. ListenAddressTests run the
# server in a private network namespace (unshare, nsenter: util-linux) and ask it with curl from inside;
# SelfContainedPublishTests hide the .NET installation with a private mount (unshare).
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "systemd-analyze is missing: installing Debian's systemd package"
  install_debian_package systemd || echo "installing systemd failed: SystemdUnitTests will fail"
fi
for tool in ip:iproute2 curl:curl; do
  if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
    echo "${tool%%:*} is missing: installing Debian's ${tool#*:} package"
    install_debian_package "${tool#*:}" || echo "installing ${tool#*:} failed: ListenAddressTests will fail"
  fi
done

# The load test's nchan comparison, and ReverseProxyTests (deploy/nginx/laharsub.conf in front of two
# instances), run nginx as a private instance on a free loopback port; the package's own service
# (port 80) is not used by the tests.
if [ ! -x /usr/sbin/nginx ] || [ ! -f /usr/lib/nginx/modules/ngx_nchan_module.so ]; then
  echo "nginx with nchan is missing: installing Debian's nginx-light and libnginx-mod-nchan"
  install_debian_package nginx-light libnginx-mod-nchan || echo "installing nginx with nchan failed: the nchan tests will fail"
fi

# The generated-client tests run the real generators: NSwag and Kiota are local dotnet tools pinned in
# tests/Laharsub.GeneratedClients.Tests/.config/dotnet-tools.json, restored from NuGet here (each test
# restores them too, so a run of that project alone needs nothing first); orval and openapi-typescript
# are npm packages of tests/Browser, installed with the browser tests' packages below.
echo "== restoring the OpenAPI generators (dotnet tools)"
(cd tests/Laharsub.GeneratedClients.Tests && dotnet tool restore >/dev/null) \
  || echo "restoring the generators failed: the generated-client tests will fail"

# No test may hold the run hostage: a test that runs longer than the hang timeout is named (in the
# blame Sequence file and the console) and its test host is killed, so it counts as failed; a run that
# still has not ended (a child process that keeps a test host's pipes open, say) is killed with its
# whole process group. CI gives the suite 90 minutes; a healthy run takes 2 to 5.
echo "== .NET tests"
timeout --kill-after=30s "${LAHARSUB_DOTNET_TEST_TIMEOUT:-30m}" \
  dotnet test Laharsub.sln -c Release --no-build -nologo \
  --blame-hang-timeout "${LAHARSUB_TEST_HANG_TIMEOUT:-8m}" --blame-hang-dump-type none \
  --logger "trx" --logger "console;verbosity=minimal" --results-directory "$results/dotnet"
dotnet_status=$?
if [ "$dotnet_status" -eq 124 ] || [ "$dotnet_status" -eq 137 ]; then
  echo "the .NET tests did not end within ${LAHARSUB_DOTNET_TEST_TIMEOUT:-30m} and were killed: a hung test host (see $results/dotnet)" >&2
fi
[ "$dotnet_status" -eq 0 ] || status=1

# The standalone server answers polls and publishes on the fast path by default; the pipeline alone
# (Laharsub:FastPath:Enabled=false) is its fallback, so the server's and the client's suites run on it too.
echo "== .NET server and client tests again on the pipeline alone (Laharsub:FastPath:Enabled=false)"
for project in tests/Laharsub.Server.Tests tests/Laharsub.Client.Tests; do
  Laharsub__FastPath__Enabled=false timeout --kill-after=30s "${LAHARSUB_DOTNET_TEST_TIMEOUT:-30m}" \
    dotnet test "$project" -c Release --no-build -nologo \
    --blame-hang-timeout "${LAHARSUB_TEST_HANG_TIMEOUT:-8m}" --blame-hang-dump-type none \
    --logger "trx" --logger "console;verbosity=minimal" --results-directory "$results/dotnet-pipeline" || status=1
done

browser_passed=0
browser_failed=0
if [ -f tests/Browser/package.json ]; then
  echo "== browser tests"
  if ! command -v chromium >/dev/null 2>&1; then
    echo "chromium is missing: installing Debian's chromium package"
    install_debian_package chromium
  fi
  (cd tests/Browser && npm ci --no-audit --no-fund --loglevel=error) || status=1
  # Node 22 for the JavaScript client's Node tests (tests/Browser/js), as an npm package of its own.
  (cd tests/Browser/js/node22 && npm ci --no-audit --no-fund --loglevel=error) || status=1
  (cd tests/Browser && timeout --kill-after=30s "${LAHARSUB_BROWSER_TEST_TIMEOUT:-20m}" npm test) 2>&1 | tee "$results/browser.tap"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  browser_passed=$(grep -E '^# pass [0-9]+' "$results/browser.tap" | tail -1 | awk '{print $3}')
  browser_failed=$(grep -E '^# fail [0-9]+' "$results/browser.tap" | tail -1 | awk '{print $3}')
  browser_passed=${browser_passed:-0}
  browser_failed=${browser_failed:-1}
fi

# Count from the result files, not from console text; name each failed test (on stderr) so that the
# tail of a CI log says which one it was.
read -r dotnet_passed dotnet_failed < <(python3 - "$results/dotnet" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
passed = failed = 0
for path in glob.glob(sys.argv[1] + "/*.trx") + glob.glob(sys.argv[1] + "-pipeline/*.trx"):
    run = ET.parse(path).getroot()
    counters = run.find(".//{*}Counters")
    if counters is not None:
        passed += int(counters.get("passed", 0))
        failed += sum(int(counters.get(name, 0)) for name in ("failed", "error", "timeout", "aborted"))
    for result in run.findall(".//{*}UnitTestResult"):
        if result.get("outcome") not in ("Passed", "NotExecuted"):
            message = result.find(".//{*}Message")
            text = " | ".join((message.text or "").split("\n"))[:600] if message is not None else ""
            print(f"FAILED {result.get('testName')}: {text}", file=sys.stderr)
print(passed, failed)
PY
)
# A test project whose host was killed leaves no result file: each one missing counts as a failure.
test_projects=$(ls tests/*/*.Tests.csproj | wc -l)
result_files=$(ls "$results"/dotnet/*.trx 2>/dev/null | wc -l)
pipeline_files=$(ls "$results"/dotnet-pipeline/*.trx 2>/dev/null | wc -l)
if [ "$pipeline_files" -lt 2 ]; then
  echo "FAILED: $((2 - pipeline_files)) of the 2 pipeline-alone test runs left no results (killed or crashed)" >&2
  dotnet_failed=$((dotnet_failed + 2 - pipeline_files)); status=1
fi
if [ "$result_files" -lt "$test_projects" ]; then
  echo "FAILED: $((test_projects - result_files)) of $test_projects .NET test projects left no results (killed or crashed)" >&2
  dotnet_failed=$((dotnet_failed + test_projects - result_files)); status=1
fi

if [ -f "$results/browser.tap" ]; then grep -E '^ *not ok' "$results/browser.tap" | sed 's/^ */FAILED browser: /' >&2; fi

passed=$((dotnet_passed + browser_passed))
failed=$((dotnet_failed + browser_failed))
[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed"
exit $status
