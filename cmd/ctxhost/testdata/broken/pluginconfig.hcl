variable "bin_dir" { default = "../bin" }

model "m" { context_window = 8000 }

plugin "tool_outputs" {
  path = "${var.bin_dir}/ctxhost-plugin-tooloutput"
  config {
    keep_recent = "many"
    colour      = "blue"
  }
}

context "c" { model = "m" }
