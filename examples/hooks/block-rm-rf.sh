#!/bin/sh
# PreToolUse hook (matcher "Bash"): refuses a shell command that removes recursively and by force
# (rm -rf, rm -fr, rm -r -f, rm --recursive --force, also after sudo, ; && || or |). Exit 2 blocks
# the call; what it prints on stderr is told to the model. Needs jq.
#
#   [[hooks.PreToolUse]]
#   matcher = "Bash"
#   command = "/path/to/examples/hooks/block-rm-rf.sh"
command=$(jq -r '.tool_input.command // empty')
[ -n "$command" ] || exit 0
printf '%s\n' "$command" | tr ';&|' '\n\n\n' | while IFS= read -r part; do
  set -f
  # shellcheck disable=SC2086
  set -- $part
  set +f
  [ "$1" = sudo ] && shift
  [ "$1" = rm ] || continue
  shift
  recursive=no
  force=no
  for word in "$@"; do
    case "$word" in
      --recursive) recursive=yes ;;
      --force) force=yes ;;
      --*) ;;
      -*)
        case "$word" in *[rR]*) recursive=yes ;; esac
        case "$word" in *f*) force=yes ;; esac
        ;;
    esac
  done
  if [ "$recursive" = yes ] && [ "$force" = yes ]; then
    echo "blocked by block-rm-rf.sh: \`$part\` removes files recursively and by force. Remove specific files, or ask the user to do it." >&2
    exit 2
  fi
done
