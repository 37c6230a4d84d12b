# ctxhost example: replay your own agent logs (SWE-agent .traj files,
# OpenAI-style message lists) through a budget and an assembler.
#
#   bin/ctxhost run -config examples/replay.hcl path/to/run.traj
#   bin/ctxhost run -config examples/replay.hcl -var assembler=codex -format json messages.json

variable "assembler" { default = "codex" }
variable "bin_dir" { default = "../bin" }
variable "window" {
  type    = number
  default = 8000
}

model "replay" {
  context_window        = var.window
  reserved_for_response = 1000
  encoding              = "o200k_base"
}

# Logs carry no plan or memory ops; the context is the conversation itself.
plugin "tool_outputs" {
  path = "${var.bin_dir}/ctxhost-plugin-tooloutput"
}

assembler "codex" { path = "${var.bin_dir}/ctxhost-assembler-codex" }
assembler "gemini" { path = "${var.bin_dir}/ctxhost-assembler-gemini" }
assembler "claude" { path = "${var.bin_dir}/ctxhost-assembler-claude" }

context "replay" {
  model     = "replay"
  assembler = var.assembler

  # With prompt caching, a turn that only appends pays a tenth for what it
  # repeats; a compaction pays full price for everything it keeps after
  # the first message it changes. So: only append, and compact rarely and
  # deep — everything older than the preserve_recent turns that may go, at least
  # down to half the budget — when the context no longer fits, or from the
  # warning threshold on when that is cheaper already on the turn it is
  # taken (a run may end after any turn).
  strategy {
    type   = "cache"
    target = 0.5
  }

  history {
    preserve_recent = 4 # turns: an action and its observation are one
  }
}

host { log_level = "error" }
