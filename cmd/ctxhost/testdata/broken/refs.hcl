plugin "p" {
  path     = "./no-such-plugin"
  priority = 101
  required = true
}

context "c" {
  model = "missing"
  strategy {
    warning_threshold  = 0.9
    critical_threshold = 0.8
  }
}
