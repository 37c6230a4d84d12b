# ctxhost in an agent's call path: `ctxhost serve -config examples/callpath.hcl`
# serves the OpenAI, Anthropic and Gemini endpoints on 127.0.0.1:7400 and
# forwards each call to the provider with its context managed. Point an
# existing agent at it with its SDK's base URL:
#
#   export OPENAI_BASE_URL=http://127.0.0.1:7400/v1
#   export ANTHROPIC_BASE_URL=http://127.0.0.1:7400
#   # Google Gen AI SDK: new GoogleGenAI({httpOptions: {baseUrl: "http://127.0.0.1:7400"}})
#
# The agent's own API key goes to the provider with each call; ctxhost never
# stores it.

model "large" {
  context_window        = 200000
  reserved_for_response = 8192
  encoding              = "o200k_base"
}

# The first-party assemblers run inside ctxhost (builtin): in the call path
# every turn is assembled while the agent waits, and a process round trip
# per turn is time the agent pays. `path = ".../ctxhost-assembler-codex"`
# runs the same assembler as a supervised process instead, byte for byte.
assembler "codex" { builtin = "codex" }
assembler "claude" { builtin = "claude" }
assembler "gemini" { builtin = "gemini" }

# One profile per provider: each assembles that provider's request body.
# Agents label nothing: the history reads each conversation's shape (infer
# "auto", the default) — a coding agent whose observations come back as
# tool results or as user messages after its actions, a chat agent with
# tools (a person's message is never an observation), a plain chat — and
# keeps the task and the latest request whole. A profile an upstream
# serves compacts only when the context would not fit (strategy "lazy",
# its default): while it fits, the agent's conversation goes as it sent it.
#
# `facts {}`: what a masked, omitted or cut message stated (ids, codes,
# amounts, dates, paths, URLs, a JSON output's keys and ids) stays in the
# context: in the masked output's placeholder, and in a bounded component
# (at most 400 tokens or 10 % of the budget) naming each message's id.
context "openai" {
  model     = "large"
  assembler = "codex"
  facts {}
}

context "anthropic" {
  model     = "large"
  assembler = "claude"
  facts {}
}

context "gemini" {
  model     = "large"
  assembler = "gemini"
  facts {}
}

upstream "openai" {
  kind     = "openai"
  base_url = "https://api.openai.com"
  profile  = "openai"
}

upstream "anthropic" {
  kind     = "anthropic"
  base_url = "https://api.anthropic.com"
  profile  = "anthropic"
}

upstream "gemini" {
  kind     = "gemini"
  base_url = "https://generativelanguage.googleapis.com"
  profile  = "gemini"
}
