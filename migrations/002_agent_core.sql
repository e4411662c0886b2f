-- Agent core (issue 3): the workspace's agent configuration and what the agent learns.

-- Persona, qualification criteria, time zone and form questions. Not secret, so kept in clear
-- beside the encrypted provider settings (the Cal.com key stays in settings_ciphertext).
-- '{}' means "not configured yet".
ALTER TABLE workspaces
  ADD COLUMN agent jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(agent) = 'object');

-- Answers the agent collected, by question id (form_responses keeps what the form sent, as
-- sent), and the agent's free notes on the lead.
ALTER TABLE leads
  ADD COLUMN answers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(answers) = 'object'),
  ADD COLUMN agent_notes text;
