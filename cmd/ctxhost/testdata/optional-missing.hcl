# The example's plugins plus an optional plugin whose binary is missing:
# validate warns, run goes on without it (a warning every turn).
variable "bin_dir" {
  default = "../../../bin"
}

model "small" {
  context_window        = 4000
  reserved_for_response = 800
}

plugin "plan" {
  path     = "${var.bin_dir}/ctxhost-plugin-plan"
  required = true
}

plugin "memory" {
  path = "${var.bin_dir}/ctxhost-plugin-memory"
}

plugin "tool_outputs" {
  path = "${var.bin_dir}/ctxhost-plugin-tooloutput"
}

plugin "notes" {
  path = "${var.bin_dir}/ctxhost-plugin-not-installed"
}

context "coding" {
  model = "small"
}
