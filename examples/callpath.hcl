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
# Agents label nothing: `infer = "agent"` reads the conversation as an agent
# loop (the last opening user message is the task, earlier ones
# demonstrations; a user message after an assistant turn is an
# observation). A chat application would leave the default, "chat".
#
# `facts {}`: what a masked, omitted or cut message stated (ids, codes,
# amounts, dates, paths, URLs, a JSON output's keys and ids) stays in the
# context: in the masked output's placeholder, and in a bounded component
# (at most 400 tokens or 5 % of the budget) naming each message's id.
context "openai" {
  model     = "large"
  assembler = "codex"
  history { infer = "agent" } # observations sent as user messages are masked like tool results
  facts {}
}

context "anthropic" {
  model     = "large"
  assembler = "claude"
  history { infer = "agent" } # observations sent as user messages are masked like tool results
  facts {}
}

context "gemini" {
  model     = "large"
  assembler = "gemini"
  history { infer = "agent" } # observations sent as user messages are masked like tool results
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
