variable "bin_dir" { default = "../bin" }

model "m" { context_window = 8000 }

assembler "gemini" {
  path   = "${var.bin_dir}/ctxhost-assembler-gemini"
  format = "md"
}

context "c" {
  model     = "m"
  assembler = "gemini"
}
