model "m" {
  context_window = "big"
  encoding       = "latin1"
}

model "m" {
  context_window = 100
}
