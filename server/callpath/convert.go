package callpath

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// jsonString is the JSON string of s.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// goTypeError matches encoding/json's error for a value of the wrong
// type: what it is, the Go struct and field path, and the Go type.
var goTypeError = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field (?:\w*\.)?([\w.]*)|value) of type (\S+)(?: \{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})?`)

// callerMessage is an error's text for the caller: a JSON value of the
// wrong type is said in JSON's terms (the field, what it is and what it
// should be), never in the Go types ctxhost decodes it into.
func callerMessage(err error) string {
	return goTypeError.ReplaceAllStringFunc(err.Error(), func(m string) string {
		g := goTypeError.FindStringSubmatch(m)
		plain := fmt.Sprintf("a JSON %s where %s is wanted", g[1], jsonKind(g[3]))
		if g[2] != "" {
			plain = g[2] + ": " + plain
		}
		return plain
	})
}

// jsonKind names the JSON value a Go type (as encoding/json spells it)
// is decoded from.
func jsonKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "["):
		return "an array"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "an object"
}
