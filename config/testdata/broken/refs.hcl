plugin "plan" {
  path = "../bin/fake-plugin"
}

context "c" {
  model     = "nope"
  plugins   = ["plan", "memory", "plan"]
  assembler = "claude"
  mode      = "batch"
}

agent "a" {
  assembler    = "missing"
  speaker_type = "robot"
  window_size  = -1
}
