modle "gpt" {
  context_window = 100000
}

model "m" {
  context_window = 100000
  colour         = "red"
}

host {
  verbose = true
}
