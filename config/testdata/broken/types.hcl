model "m" {
  context_window = "lots"
  encoding       = "utf8"
}

plugin "p" {
  path     = "../bin/fake-plugin"
  priority = 101
  timeout  = "soon"
  required = "maybe"
}

plugin "q" {
  sha256 = "abc"
}
