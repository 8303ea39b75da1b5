#!/usr/bin/env bash
# Runs the short benchmark profile (about 10 minutes on 2 cores, Redis included) and writes docs/benchmarks.md and
# docs/benchmarks.svg, then refreshes the rows of it that other pages quote. Every figure of the report comes from this
# one run. Optional: a regex of benchmarks to run (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."

mvn -B -q -ntp -pl benchmarks -am package -DskipTests
mkdir -p benchmarks/target
java -jar benchmarks/target/benchmarks.jar "${1:-io.breakwater.benchmarks}" \
  -f 1 -wi 5 -i 5 -w 1s -r 1s -prof gc -rf json -rff benchmarks/target/jmh.json
# P6: Redis idempotent calls against redis-benchmark SET on this machine, if both are installed.
rm -f benchmarks/target/redis.md
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
  java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.redis.RedisThroughput 32 200000 \
    2>/dev/null | grep '^|' > benchmarks/target/redis.md
else
  echo "redis-server or redis-benchmark not on the PATH: the report will say P6 was not measured" >&2
fi
# P8: Breakwater's heap per stream, as TenThousandStreamsTest measures and prints it.
mvn -B -ntp -pl core test -Dtest=TenThousandStreamsTest -Dsurefire.failIfNoSpecifiedTests=false \
  | grep '^P8:' > benchmarks/target/heap.txt \
  || echo "TenThousandStreamsTest printed no P8 line: the report will say P8 was not measured" >&2
# Issue 17: the share of requests that are retries in a 10-minute outage, as RetryBudgetsTest measures and prints it.
mvn -B -ntp -pl core test -Dtest=RetryBudgetsTest -Dsurefire.failIfNoSpecifiedTests=false \
  | grep '^RetryBudgetsTest: 10-minute outage' > benchmarks/target/retry-share.txt \
  || echo "RetryBudgetsTest printed no outage line: the report will say the retry share was not measured" >&2
java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.report.BenchmarkReport \
  benchmarks/target/jmh.json docs/benchmarks.md docs/benchmarks.svg \
  --redis benchmarks/target/redis.md --heap benchmarks/target/heap.txt \
  --retry-share benchmarks/target/retry-share.txt
echo "Wrote docs/benchmarks.md and docs/benchmarks.svg"
# Pages quote rows of the report (<!-- figures: name -->): refresh them from this run.
mvn -B -q -ntp -pl examples -am test -Dtest=DocFiguresTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbreakwater.snippets.update=true
echo "Refreshed the figures other pages quote"
