plugin "p" {
  path     = "./no-such-plugin"
  priority = 101
}

context "c" {
  model = "missing"
  strategy {
    warning_threshold  = 0.9
    critical_threshold = 0.8
  }
}
