#!/bin/sh
# PostToolUse hook (matcher "*"): appends one JSON line per tool call to an audit log: when, which
# conversation, which tool (jp's name and the common one), its input and whether it failed.
# The log is $JP_AUDIT_LOG, or ~/.local/state/jp/audit.ndjson. Needs jq.
#
#   [[hooks.PostToolUse]]
#   command = "/path/to/examples/hooks/audit-log.sh"
log=${JP_AUDIT_LOG:-"$HOME/.local/state/jp/audit.ndjson"}
mkdir -p "$(dirname "$log")"
jq -c --arg time "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{
  time: $time,
  conversation: .session_id,
  tool: .jp.tool,
  tool_name: .tool_name,
  input: .tool_input,
  is_error: .tool_response.is_error
}' >> "$log"
