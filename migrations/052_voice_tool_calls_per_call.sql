-- A voice tool call is one call's (docs/VOICE.md, "Tool calls"): identified by the workspace, the
-- provider's call and the tool call's id, no longer by the workspace and the id alone. Tool-call
-- ids are not unique across calls (a custom LLM behind Vapi numbers them `call_1`, `call_2`, …), so
-- one lead's tool call was answered with another call's stored result — another lead's booking —
-- and never ran. The rows stay: unique by the old key, they are unique by the new one.
ALTER TABLE voice_tool_calls
  DROP CONSTRAINT voice_tool_calls_pkey,
  ADD CONSTRAINT voice_tool_calls_pkey PRIMARY KEY (workspace_id, provider_call_id, tool_call_id);
