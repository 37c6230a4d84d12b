variable "window" {
  type    = number
  default = 32000
}

variable "encoding" {
  description = "tokenizer of the small model"
  default     = "cl100k_base"
}

variable "fake_sha" {
  type = string
}

model "small" {
  context_window = var.window
  encoding       = var.encoding
}

model "big" {
  context_window        = 200000
  reserved_for_response = 8192
  encoding              = "o200k_base"
}

host {
  log_level  = "debug"
  log_format = "json"
  store      = "state"
}
