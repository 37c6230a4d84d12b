model "m" {
  context_window = 200000
}

host {}

model "n" {
  context_window = 50000
}
