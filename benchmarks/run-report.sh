#!/usr/bin/env bash
# Runs the short benchmark profile (about 8 minutes on 2 cores) and writes docs/benchmarks.md and docs/benchmarks.svg.
# Every ratio in the report compares figures of this one run. Optional: a regex of benchmarks to run (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."

mvn -B -q -ntp -pl benchmarks -am package -DskipTests
mkdir -p benchmarks/target
java -jar benchmarks/target/benchmarks.jar "${1:-io.breakwater.benchmarks}" \
  -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc -rf json -rff benchmarks/target/jmh.json
java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.report.BenchmarkReport \
  benchmarks/target/jmh.json docs/benchmarks.md docs/benchmarks.svg
echo "Wrote docs/benchmarks.md and docs/benchmarks.svg"
