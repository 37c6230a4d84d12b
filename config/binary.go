package config

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"regexp"
	"strings"
)

var sha256Hex = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// binary checks a plugin or assembler binary: it exists, is a regular
// executable file and, when sha256 is set, has that digest. Problems point
// at the path or sha256 attribute. When optional (a plugin that is not
// required), a binary that cannot be launched (missing, not a regular file,
// not executable) is a warning: the host runs without the plugin, since an
// optional plugin only enriches the context. A wrong checksum is always an error.
func (p *problems) binary(src Source, path, sum string, optional bool) {
	unusable := p.errorf
	if optional {
		unusable = p.warnf
	}
	if sum != "" && !sha256Hex.MatchString(sum) {
		p.errorf(src, "sha256", "Invalid checksum", "sha256 must be 64 hexadecimal digits, got %q.", sum)
		sum = ""
	}
	if src.invalid["path"] {
		return
	}
	if path == "" {
		p.errorf(src, "path", "Missing plugin binary", "path must name the plugin binary.")
		return
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		unusable(src, "path", "Missing plugin binary", "Cannot use %s: %v.", path, err)
		return
	case !info.Mode().IsRegular():
		unusable(src, "path", "Invalid plugin binary", "%s is not a regular file.", path)
		return
	case info.Mode().Perm()&0o111 == 0:
		unusable(src, "path", "Invalid plugin binary", "%s is not executable.", path)
		return
	}
	if sum == "" {
		return
	}
	got, err := fileSHA256(path)
	if err != nil {
		p.errorf(src, "path", "Invalid plugin binary", "Cannot read %s: %v.", path, err)
		return
	}
	if !strings.EqualFold(got, sum) {
		p.errorf(src, "sha256", "Checksum mismatch", "%s has sha256 %s, but the configuration expects %s.", path, got, strings.ToLower(sum))
	}
}

// fileSHA256 returns the lowercase hex SHA-256 digest of a file.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
