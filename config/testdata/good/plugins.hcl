plugin "plan" {
  path        = "../bin/fake-plugin"
  sha256      = var.fake_sha
  priority    = 2
  compactable = false
  required    = true
  timeout     = "500ms"

  config {
    max_items = 20
    title     = upper("plan")
  }
}

plugin "memory" {
  path = "../bin/fake-plugin"
}

assembler "gemini" {
  path    = "../bin/fake-plugin"
  options = { temperature = "0.2" }
}

context "coding" {
  model         = "small"
  system_prompt = trimspace(file("prompt.txt"))
  instructions  = env("CTXHOST_TEST_INSTRUCTIONS", "Be brief.")
  plugins       = ["plan"]
  assembler     = "gemini"
  mode          = "fresh"

  strategy {
    type               = "graduated"
    warning_threshold  = 0.75
    critical_threshold = 0.95
    target             = 0.5
    carryover_turns    = 2
  }

  history {
    preserve_recent = 4
    keep_first      = false
    window          = 3
    priority        = 7
  }

  fresh {
    reserved_tokens = 8000
    shares          = { tool_outputs = 2, memory = 1 }
  }

  multi_agent {
    max_bytes       = 4096
    marker_patterns = ["\\[NEXT:[^\\]]+\\]", "@@\\w+"]
    dedup           = false
  }
}

context "defaults" {
  model = "big"
}

agent "max" {
  type             = "claude-code"
  assembler        = "gemini"
  format           = "cli"
  instruction_file = "max.md"
  window_size      = 0
}

agent "carol" {
  type               = "custom-bot"
  system_instruction = format("You are %s.", "Carol")
  speaker_type       = "human"
}
