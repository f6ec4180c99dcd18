#!/bin/sh
# PostToolUse hook (matcher "Write|Edit"): formats the file jp just created or changed. The
# formatter is $FORMATTER (the file is appended to it), or Prettier for the files it knows. What
# the formatter says when it fails goes to the model (exit 2), so it can fix the file. Needs jq.
#
#   [[hooks.PostToolUse]]
#   matcher = "Write|Edit"
#   command = "/path/to/examples/hooks/format-after-edit.sh"
file=$(jq -r '.tool_input.file_path // empty')
[ -f "$file" ] || exit 0
if [ -n "$FORMATTER" ]; then
  formatter=$FORMATTER
else
  case "$file" in
    *.js | *.mjs | *.cjs | *.ts | *.tsx | *.jsx | *.json | *.css | *.md | *.yaml | *.yml) formatter="npx --no-install prettier --write" ;;
    *) exit 0 ;;
  esac
fi
# shellcheck disable=SC2086
if ! output=$($formatter "$file" 2>&1); then
  printf 'the formatter (%s) failed on %s:\n%s\n' "$formatter" "$file" "$output" >&2
  exit 2
fi
