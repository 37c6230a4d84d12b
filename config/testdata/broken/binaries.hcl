plugin "absent" {
  path     = "../bin/no-such-plugin"
  required = true
}

plugin "dir" {
  path     = "../bin"
  required = true
}

plugin "plain" {
  path     = "../bin/not-exec"
  required = true
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

# Optional plugins that cannot be launched are warnings (graceful
# degradation); a wrong checksum stays an error.
plugin "optional_absent" {
  path = "../bin/no-such-plugin"
}

plugin "optional_plain" {
  path = "../bin/not-exec"
}

plugin "optional_tampered" {
  path   = "../bin/fake-plugin"
  sha256 = "1111111111111111111111111111111111111111111111111111111111111111"
}
