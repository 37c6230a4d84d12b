variable "needed" {
  type = string
}

variable "count" {
  type    = number
  default = 3
}

model "m" {
  context_window = var.count
  encoding       = env("CTXHOST_TEST_UNSET_VARIABLE")
}
