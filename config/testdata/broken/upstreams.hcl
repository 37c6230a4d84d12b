model "m" { context_window = 10000 }
context "c" { model = "m" }
upstream "a" {
  kind     = "openai"
  base_url = "https://api.openai.com"
}
upstream "b" {
  kind     = "openai"
  base_url = "ftp://example.com"
}
upstream "c" {
  kind     = "mistral"
  base_url = "https://user:pw@example.com/?key=1"
  profile  = "nope"
  api_key  = "sk-1"
}
upstream "d" {
  kind           = "gemini"
  base_url       = "https://generativelanguage.googleapis.com"
  fallback_model = "gemini-unknown"
}
