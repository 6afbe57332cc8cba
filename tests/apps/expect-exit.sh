#!/usr/bin/env bash
# expect-exit.sh CODE [PATTERN...] -- COMMAND...: runs COMMAND and passes when
# it exits with CODE and its output (stdout and stderr together) has a line
# matching each extended regular expression PATTERN. For the failure paths,
# where ctest's WILL_FAIL would also accept a crash or the wrong failure.
expected=$1
shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  patterns+=("$1")
  shift
done
if [ $# -lt 2 ]; then
  echo "usage: expect-exit.sh CODE [PATTERN...] -- COMMAND..." >&2
  exit 2
fi
shift
output=$("$@" 2>&1)
rc=$?
printf '%s\n' "$output"
status=0
if [ "$rc" -ne "$expected" ]; then
  echo "expect-exit: exit code $rc, expected $expected" >&2
  status=1
fi
for pattern in ${patterns[@]+"${patterns[@]}"}; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
    echo "expect-exit: no output line matches '$pattern'" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "expect-exit: exit code $rc and output as expected"
exit $status
