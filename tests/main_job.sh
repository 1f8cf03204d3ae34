#!/bin/sh
# The README's main job as ctest runs it: `lmoracle verify` on the built-in cases must exit 0,
# print the claims summary with no claim failing, and end with its summary line.
#   tests/main_job.sh path/to/lmoracle
out=$("$1" verify)
rc=$?
printf '%s\n' "$out" | tail -25
printf '%s\n' "$out" | grep -q '^claims: [0-9][0-9]* evaluated on ref.* 0 FAIL' ||
  { echo "main_job: no claims summary, or a claim FAILS"; exit 1; }
printf '%s\n' "$out" | tail -1 | grep -q '^verify: [0-9][0-9]* passed, 0 failed' ||
  { echo "main_job: the last line is not 'verify: N passed, 0 failed'"; exit 1; }
exit $rc
