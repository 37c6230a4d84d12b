model "m" {
  context_window        = 1000
  reserved_for_response = 1000
}

context "c" {
  model = "m"

  strategy {
    type               = "eager"
    warning_threshold  = 0.9
    critical_threshold = 0.8
    target             = 0.95
  }
}

context "d" {
  model = "m"

  strategy {
    critical_threshold = 1.5
    target             = 0
  }
}
