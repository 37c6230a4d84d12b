# ctxhost example: fresh task contexts. Every task gets a
# context built from scratch: no conversation history, only the system
# prompt, the task spec and what the task brings to the plugins (its
# memories, the tool outputs it needs, its plan), fitted to the token
# budget by the budgeter below. Run it with
#
#   bin/ctxhost run -config examples/fresh.hcl examples/fresh-tasks.jsonl
#   bin/ctxhost inspect -config examples/fresh.hcl examples/fresh-tasks.jsonl
#
# In the transcript, `input` is the next task's spec, `apply` and
# `tool_output` events are that task's ops (applied to its own plugin
# session), `prepare` builds the task's context (its `agent` names the
# agent; default: the profile's name). `message` events are accepted and
# left out, with a warning.

variable "assembler" {
  description = "which assembler builds the payload: gemini, claude or codex"
  default     = "claude"
}

variable "bin_dir" {
  description = "where `make build` put the plugin binaries (relative to this file)"
  default     = "../bin"
}

# The whole budget of a task context is the model window.
model "worker" {
  context_window        = 2400
  reserved_for_response = 600
  encoding              = "cl100k_base"
}

plugin "plan" {
  path = "${var.bin_dir}/ctxhost-plugin-plan"
}

plugin "memory" {
  path = "${var.bin_dir}/ctxhost-plugin-memory"
}

plugin "tool_outputs" {
  path = "${var.bin_dir}/ctxhost-plugin-tooloutput"
}

assembler "gemini" {
  path = "${var.bin_dir}/ctxhost-assembler-gemini"
}

assembler "claude" {
  path = "${var.bin_dir}/ctxhost-assembler-claude"
}

assembler "codex" {
  path = "${var.bin_dir}/ctxhost-assembler-codex"
}

context "tasks" {
  model     = "worker"
  mode      = "fresh"
  assembler = var.assembler

  system_prompt = <<-EOT
    You are a careful Go engineer working on github.com/example/ratelimit.
    Each task arrives with everything it needs; do only that task.
  EOT

  fresh {
    system_prompt_tokens = 120
    task_spec_tokens     = 150
    reserved_tokens      = 600
    # Files read and commands run matter most to a coding task.
    shares = {
      tool_outputs = 0.60
      plan         = 0.25
      memory       = 0.15
    }
  }
}

host {
  log_level = "warn"
}
