/**
 * Events as Claude Code sends them to its hooks, and the policy the hook tests enforce. The payloads
 * have the fields and shapes Claude Code sends (its hooks reference, and the `tool_use` /
 * `tool_use_result` records of real transcripts): `session_id`, `transcript_path`, `cwd`,
 * `permission_mode`, `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, `tool_response`,
 * `prompt`, `stop_hook_active`.
 */

export const HOOK_POLICY = `/// The rules of a project, for its coding agent.
policy project {
  /// A credential file, read with the Read tool.
  pattern secret_read = action in {Read} and file_path ~ "*.env"
  /// A call that sends data off the machine.
  pattern egress = action in {curl, wget, WebFetch}

  /// No egress after reading a secret.
  rule no_egress_after_secret: always not (egress and once secret_read)
    block "Do not send anything off the machine after reading a credential file; ask the user instead."
  /// Deleting files recursively needs a person's approval.
  rule confirm_recursive_delete: abs(action in {rm} and recursive in {true})
    ask "Say which files will be deleted and why."
  /// Files are read with the Read tool, not with cat.
  rule prefer_read_tool: abs(action in {cat})
    warn "Use the Read tool to read files."
  /// Every ticket opened is closed before the work ends.
  rule close_tickets: resp(action in {mcp__tickets__open} and title = $t, action in {mcp__tickets__close} and title = $t)
    block "Close the ticket you opened (mcp__tickets__close with its title)."
  /// Deploy only when the user asked for it in this session.
  rule deploy_on_request: prec(action in {"npm run"} and script in {"deploy"}, action in {user_message} and text ~ "*deploy*")
    block "Ask the user whether to deploy."
}
`;

export interface Payload {
  readonly [key: string]: unknown;
}

/** The builders of a project's events; `project` gives its directory (known once the test has made it). */
export function claudeCodeEvents(project: () => string) {
  /** An event as Claude Code sends it, for a session of the project. */
  const payload = (session: string, event: string, fields: Payload): Payload => ({
    session_id: session,
    transcript_path: `/home/dev/.claude/projects/-home-dev-project/${session}.jsonl`,
    cwd: project(),
    permission_mode: "default",
    hook_event_name: event,
    ...fields,
  });
  const preToolUse = (session: string, id: string, tool: string, input: Payload) => payload(session, "PreToolUse", { tool_name: tool, tool_input: input, tool_use_id: id });
  const postToolUse = (session: string, id: string, tool: string, input: Payload, response: unknown) =>
    payload(session, "PostToolUse", { tool_name: tool, tool_input: input, tool_use_id: id, tool_response: response });
  return { payload, preToolUse, postToolUse };
}
