# ctxhost example: one coding agent with the four first-party context
# plugins and three assemblers. Run it with
#
#   make run                                   # Gemini generateContent body
#   make run RUNFLAGS="-var assembler=claude"  # the same turns for Claude
#
# or directly: bin/ctxhost run -config examples/agent.hcl examples/coding-session.jsonl

variable "assembler" {
  description = "which assembler builds the payload: gemini, claude or codex"
  default     = "gemini"
}

variable "bin_dir" {
  description = "where `make build` put the plugin binaries (relative to this file)"
  default     = "../bin"
}

# A deliberately small window so the example transcript forces compaction.
model "small" {
  context_window        = 4000
  reserved_for_response = 800
  encoding              = "cl100k_base"
}

plugin "plan" {
  path     = "${var.bin_dir}/ctxhost-plugin-plan"
  required = true # the plan is the agent's compass: fail the turn without it
}

plugin "memory" {
  path = "${var.bin_dir}/ctxhost-plugin-memory"
  config {
    max_entries = 50
  }
}

plugin "tool_outputs" {
  path    = "${var.bin_dir}/ctxhost-plugin-tooloutput"
  config {
    keep_recent = 2 # older outputs become one-line placeholders under pressure
  }
}

# The SDK's hello-world plugin (examples/hello), wired in like any other.
plugin "notes" {
  path     = "${var.bin_dir}/ctxhost-plugin-hello"
  priority = 9 # compacted before memory (8), after tool outputs (10)
}

assembler "gemini" {
  path = "${var.bin_dir}/ctxhost-assembler-gemini"
}

assembler "claude" {
  path = "${var.bin_dir}/ctxhost-assembler-claude"
  options = {
    model = "claude-sonnet-4-5"
  }
}

assembler "codex" {
  path = "${var.bin_dir}/ctxhost-assembler-codex"
}

context "coding" {
  model     = "small"
  assembler = var.assembler

  strategy {
    type               = "proactive"
    warning_threshold  = 0.7
    critical_threshold = 0.9
    target             = 0.6
  }

  history {
    preserve_recent = 3 # turns
    keep_first      = true
  }
}

host {
  log_level = "warn"
}
