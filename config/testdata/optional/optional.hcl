# An optional plugin whose binary is missing: a warning, not an error.
model "m" {
  context_window = 8000
}

plugin "extras" {
  path = "../bin/no-such-plugin"
}

context "c" {
  model = "m"
}
