//go:build race

package tokenizer

// raceEnabled is true under the race detector, which makes the
// single-threaded oracle comparisons 5-15× slower; they then use smaller
// inputs (the full sizes run without -race).
const raceEnabled = true
