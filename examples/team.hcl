# ctxhost example: a multi-agent team. A human (kailai) talks
# to three AI agents, each with its own assembler and prompt format:
#
#   max   claude-code    Claude Code prompt, system text for --append-system-prompt
#   sarah openai-codex   Codex prompt with an inline [SYSTEM]
#   carol google-gemini  Gemini text prompt ("Instructions:", "Conversation so far:")
#   zed   acme-bot       an unknown type: the plain-text fallback, with a warning
#
# Run it with
#
#   bin/ctxhost run -config examples/team.hcl examples/team-chat.jsonl
#
# Every `prepare` event naming an agent prints that agent's view: the
# window of messages before the current one, markers stripped, AI→AI
# duplicates removed, and the payload its assembler built.

variable "bin_dir" {
  description = "where `make build` put the plugin binaries (relative to this file)"
  default     = "../bin"
}

model "team" {
  context_window        = 32000
  reserved_for_response = 2000
  encoding              = "cl100k_base"
}

assembler "claude" {
  path   = "${var.bin_dir}/ctxhost-assembler-claude"
  format = "cli"
}

assembler "codex" {
  path   = "${var.bin_dir}/ctxhost-assembler-codex"
  format = "cli"
}

assembler "gemini" {
  path   = "${var.bin_dir}/ctxhost-assembler-gemini"
  format = "text"
}

context "team" {
  model   = "team"
  plugins = []
  multi_agent {
    window_size         = 5
    max_bytes           = 786432
    team_task_max_bytes = 5120
    marker_patterns     = ["\\[NEXT:[^\\]]+\\]"]
    dedup               = true
  }
}

agent "max" {
  type               = "claude-code"
  assembler          = "claude"
  system_instruction = "You are Max, the product manager. Keep answers short and decide."
}

agent "sarah" {
  type               = "openai-codex"
  assembler          = "codex"
  system_instruction = "You are Sarah, the backend engineer. Be concrete about effort and risk."
}

agent "carol" {
  type               = "google-gemini"
  assembler          = "gemini"
  system_instruction = "You are Carol, the designer."
  window_size        = 3
}

agent "zed" {
  type               = "acme-bot"
  system_instruction = "You are Zed, the release bot. Reply with a checklist."
}
