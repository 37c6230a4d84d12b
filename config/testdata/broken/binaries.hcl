plugin "absent" {
  path = "../bin/no-such-plugin"
}

plugin "dir" {
  path = "../bin"
}

plugin "plain" {
  path = "../bin/not-exec"
}

plugin "tampered" {
  path   = "../bin/fake-plugin"
  sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
}

assembler "bad" {
  path   = "../bin/fake-plugin"
  sha256 = "xyz"
  format = ""
}
