package codeindextest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// words make up the names of a large repository's definitions.
var words = strings.Fields(`parse load dump render field schema order price tax total item user account
session token cache index query result value error handler request response config option path file
node graph rank score match filter sort merge split join read write open close start stop build check`)

// LargeRepo is a generated Python repository of n modules (about 80
// lines each, in directories of 50): each defines two classes of four
// methods and six functions, whose bodies call functions and classes of
// other modules, a few modules far more often than most (as real code
// calls its core), so the reference graph has the shape of a real one.
// The same n and seed give the same files.
func LargeRepo(n int, seed uint64) map[string]string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(r, 1.2, 4, uint64(n-1))
	name := func(m, k int) string {
		return fmt.Sprintf("%s_%s_%d", words[(m*7+k)%len(words)], words[(m*13+k*5)%len(words)], m*10+k)
	}
	class := func(m, k int) string {
		a, b := words[(m*3+k)%len(words)], words[(m*11+k*7)%len(words)]
		return fmt.Sprintf("%s%s%d", strings.ToUpper(a[:1])+a[1:], strings.ToUpper(b[:1])+b[1:], m*2+k)
	}
	path := func(m int) string { return fmt.Sprintf("pkg%03d/mod%04d.py", m/50, m) }
	files := make(map[string]string, n+1)
	for m := range n {
		var b strings.Builder
		callee := func() string {
			o := int(zipf.Uint64())
			if r.IntN(3) == 0 {
				return class(o, r.IntN(2)) + "()." + fmt.Sprintf("method_%d", r.IntN(4))
			}
			return name(o, r.IntN(6))
		}
		fmt.Fprintf(&b, "\"\"\"Module %d: %s and %s.\"\"\"\n\nimport os\n\n", m, words[m%len(words)], words[(m/3)%len(words)])
		for k := range 2 {
			fmt.Fprintf(&b, "\nclass %s:\n    \"\"\"A %s.\"\"\"\n\n", class(m, k), words[(m+k)%len(words)])
			for j := range 4 {
				fmt.Fprintf(&b, "    def method_%d(self, value):\n        result = %s(value)\n        return self.%s or result\n\n",
					j, callee(), words[(m+j)%len(words)])
			}
		}
		for k := range 6 {
			fmt.Fprintf(&b, "\ndef %s(value, option=None):\n    if option is None:\n        option = %s(value)\n    total = %s(option)\n    return total + len(os.sep)\n\n",
				name(m, k), callee(), callee())
		}
		files[path(m)] = b.String()
	}
	files["README.md"] = "# large\n\nA generated repository.\n"
	return files
}
