model "m" {
  context_window = 100000
