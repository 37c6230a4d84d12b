//go:build unix && !linux

package main

import "syscall"

// maxRSSBytes is a child's peak resident set in bytes (BSDs and macOS
// count bytes).
func maxRSSBytes(ru *syscall.Rusage) float64 { return float64(ru.Maxrss) }
