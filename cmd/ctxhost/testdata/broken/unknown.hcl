modle "m" {
  context_window = 10
}

host {
  log_level = "loud"
  colour    = true
}
