model "m" {
  context_window = 8000
  pricing {
    cache_read  = -0.1
    granularity = -1
  }
}

context "c" {
  model = "m"
  strategy {
    min_free = -5
  }
  history {
    kinds = { rumour = "mask", task = "forget" }
  }
}
