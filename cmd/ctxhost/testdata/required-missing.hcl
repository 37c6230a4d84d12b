# A required plugin whose binary is missing: a configuration error.
model "small" {
  context_window        = 4000
  reserved_for_response = 800
}

plugin "plan" {
  path     = "./ctxhost-plugin-not-installed"
  required = true
}

context "coding" {
  model = "small"
}
